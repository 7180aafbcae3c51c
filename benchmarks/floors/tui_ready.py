"""The floor of an interactive launch with piko's libraries: a prompt_toolkit editor and footer on screen.

It imports what piko's interactive mode needs from its chosen libraries (attrs, pluggy, orjson,
rich, prompt_toolkit), starts a prompt_toolkit application with a three-line editor and a
footer naming the model (``mock-1``, the marker ``bench_pi16.py --floor`` waits for in tmux),
and runs until killed. No settings, plugins, session, theme or transcript.
"""

import asyncio

import attrs  # noqa: F401  (imported for its cost: the data model is attrs classes)
import orjson  # noqa: F401  (imported for its cost: JSON everywhere)
import pluggy  # noqa: F401  (imported for its cost: the plugin manager)
import rich.text  # noqa: F401  (imported for its cost: the transcript renders with rich)
from prompt_toolkit.application import Application
from prompt_toolkit.layout import HSplit
from prompt_toolkit.layout import Layout
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.widgets import TextArea

if __name__ == "__main__":
    editor = TextArea(height=3)
    footer = Window(FormattedTextControl("~/project  mock-1"), height=1)
    app: Application[None] = Application(layout=Layout(HSplit([editor, footer]), focused_element=editor))
    asyncio.run(app.run_async())
