"""Progress bars for runs and batches, and waiting on background work.

The work runs in Rust on threads of its own (the GIL is free); Python
waits on it in slices of 0.1 s, redrawing the bar and letting Ctrl-C (or
a notebook's interrupt) in between. A bar is drawn in a Jupyter notebook
(an HTML ``<progress>`` element, updated in place) or on a terminal
(stderr, redrawn with a carriage return, as tqdm does); elsewhere (a
pipe, ``TERM=dumb``) nothing is drawn unless ``progress=True``.
"""

from __future__ import annotations

import html
import os
import sys
import time
from typing import Any, Callable, Optional, Tuple

#: The bar appears only once the work has taken this long (s), so that
#: quick calls print nothing.
SHOW_AFTER = 0.3
#: Seconds between redraws.
REDRAW = 0.2


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _terminal() -> bool:
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


def _clock(s: float) -> str:
    s = int(max(s, 0))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def _counts(done: int, total: int, unit: str) -> str:
    if unit == "sim":
        return f"{done / 10:.1f}% of simulated time"
    return f"{done}/{total} {unit}"


class _Bar:
    """A bar: ``desc [=====>    ] 12/20 runs, 00:03 elapsed, eta 00:02``."""

    def __init__(self, desc: str, unit: str, notebook: bool) -> None:
        self.desc = desc
        self.unit = unit
        self.notebook = notebook
        self.started = time.monotonic()
        self.last = 0.0
        self.handle: Any = None
        self.width = 0

    def _text(self, done: int, total: int) -> Tuple[float, str]:
        frac = min(done / total, 1.0) if total else 0.0
        elapsed = time.monotonic() - self.started
        eta = elapsed * (1 - frac) / frac if frac > 0 else None
        text = f"{_counts(done, total, self.unit)}, {_clock(elapsed)} elapsed"
        text += f", eta {_clock(eta)}" if eta is not None else ", eta ?"
        return frac, text

    def update(self, done: int, total: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < REDRAW:
            return
        self.last = now
        frac, text = self._text(done, total)
        if self.notebook:
            from IPython.display import HTML, display  # type: ignore[import-not-found]

            body = HTML(
                f"<div><code>{html.escape(self.desc)}</code> "
                f'<progress value="{frac:.4f}" max="1" style="width:30ex"></progress> '
                f"<code>{html.escape(text)}</code></div>"
            )
            if self.handle is None:
                self.handle = display(body, display_id=True)
            else:
                self.handle.update(body)
        else:
            n = int(frac * 30)
            bar = "=" * n + (">" if n < 30 else "") + " " * max(30 - n - 1, 0)
            line = f"{self.desc} [{bar}] {text}"
            pad = " " * max(self.width - len(line), 0)
            self.width = len(line)
            sys.stderr.write("\r" + line + pad)
            sys.stderr.flush()

    def close(self, done: int, total: int, note: Optional[str] = None) -> None:
        if self.notebook:
            self.update(done, total, force=True)
            if note and self.handle is not None:
                from IPython.display import HTML  # type: ignore[import-not-found]

                _, text = self._text(done, total)
                self.handle.update(HTML(f"<div><code>{html.escape(self.desc)}: {html.escape(note)}</code></div>"))
        else:
            # As the CLI's bar: cleared when done.
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _want(progress: Optional[bool]) -> Optional[bool]:
    """None: no bar; else whether it goes to a notebook."""
    if progress is False:
        return None
    if _in_notebook():
        return True
    if progress or _terminal():
        return False
    return None


def wait(task: Any, desc: str, unit: str, progress: Optional[bool], on_interrupt: Callable[[Any, bool], BaseException]) -> Tuple[Any, bool]:
    """Waits for `task` with a bar; returns ``(output, complete)``.

    On KeyboardInterrupt the task is cancelled and waited for (a run stops
    at its next slice of simulated time, well under a second), and the
    exception made by ``on_interrupt(output, complete)`` from what the
    task kept is raised. A second interrupt while it stops is ignored.
    """
    where = _want(progress)
    bar: Optional[_Bar] = None
    started = time.monotonic()
    try:
        while not task.wait(0.1):
            if where is not None and bar is None and time.monotonic() - started >= SHOW_AFTER:
                bar = _Bar(desc, unit, where)
            if bar is not None:
                bar.update(task.done, task.total)
    except KeyboardInterrupt:
        task.cancel()
        while True:
            try:
                if task.wait(0.1):
                    break
            except KeyboardInterrupt:
                continue
        if bar is not None:
            bar.close(task.done, task.total, "interrupted")
        output, complete = task.result()  # a cancelled single run raises KeyboardInterrupt here
        raise on_interrupt(output, complete) from None
    if bar is not None:
        bar.close(task.done, task.total)
    return task.result()
