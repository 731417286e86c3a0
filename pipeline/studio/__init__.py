"""The studio: a local web application to review, play and curate a night's Levels.

`numbermatch studio [PATH]` serves the level files under PATH on 127.0.0.1. The browser only
shows boards and sends clicks; every rules decision is made here by `pipeline.engine`, hints and
"still winnable?" by `pipeline.solver` with a node budget, so there is one implementation of the
rules. A game's whole state (the moves played) travels in the page address, so the server keeps
no sessions, the back button works, and a reload shows the same position.

    paths.py    resolve a request's path inside PATH, or refuse it
    library.py  find nights, bundles and puzzle folders; read them as Bundle and Puzzle values;
                a bundle's swap candidates (its pool, or the stock); content hashes
    game.py     a position from a move list; hint, fewest adds, certificate steps
    curate.py   the draft (swaps, pins, excludes) and the save
    app.py      the Starlette application (routes, templates)
"""
