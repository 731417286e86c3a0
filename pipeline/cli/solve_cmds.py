"""(commands are added here by their feature)"""
