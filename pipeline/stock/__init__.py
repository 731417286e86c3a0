"""The stock: validated puzzles the pipeline made and has not shipped, carried across nights.

Layout (plain files, so git and review still work; the output folder's index is a cache):

    <out>/stock/<ruleset>/<cells>x<adds>/<id>.yaml

Each stock file is a puzzle file whose provenance says when it was stocked (`stocked:
YYYY-MM-DD`); "oldest first" means that date, then the id. `store` writes, reads, counts,
refills and prunes the stock; `night` is how the nightly job draws from it and hands back what
it made and did not use, atomically with the publish of the night.
"""
