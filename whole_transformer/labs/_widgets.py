"""What every lab shares: its stylesheet, a live summary line, and names for the controls ipywidgets leaves unnamed.

``LabBox`` is the root of every lab (an ``ipywidgets.VBox``). It puts ``_html.STYLESHEET`` first in the lab, so
the classes of ``_html`` style the lab wherever it is drawn (JupyterLab, a saved notebook, the lecture edition's
HTML page). ``self.live`` is a one-line summary of what the lab shows now ("Step 3: the last row picks
'hundred'; it looked most at '4'"); a lab sets it with ``say(text)`` after every change, and a screen reader
announces it (the line is an ARIA live region, ``role="status"``).

ipywidgets draws a slider's handle (``role="slider"``) without a name, so a screen reader says only "slider, 64".
When a lab is displayed it also displays ``NAME_CONTROLS_JS``, a few lines of JavaScript that give every slider
handle of a lab the name of its visible label (``aria-label``) and its value as the read-out shows it
(``aria-valuetext``: a selection slider's handle otherwise says its index, "5" for d_model 64), take the read-out
out of the Tab order (``tabindex=-1``: the handle's keys change the value), make the live line's container the live
region (it stays in the page while its text changes, as screen readers need), name any icon-only button by its
tooltip, keep a closed dropdown's arrow keys from JupyterLab's notebook shortcuts (``data-lm-suppress-shortcuts``:
without it they move to another cell), and hand the focus on to the lab's next control (or the one before, for the
last) when the focused control is disabled, as Next step is at the end of a reading and Train while it trains,
instead of letting it fall to the page. JupyterLab runs it for outputs the student ran (trusted); the lecture HTML
runs it as a page script.

CSS classes: ``wt-lab`` the root; ``wt-style`` the stylesheet's (invisible) widget; ``wt-live`` and
``wt-<lab>-live`` the summary line's widget, ``wt-said`` its text.
"""

from __future__ import annotations

import ipywidgets as widgets

from . import _html

#: Names the controls ipywidgets leaves unnamed; safe to run any number of times on a page.
NAME_CONTROLS_JS = """
(function () {
  if (window.wtNameControls) { window.wtNameControls(); return; }
  function name() {
    document.querySelectorAll('.wt-lab .widget-slider').forEach(function (s) {
      var label = s.querySelector('.widget-label');
      var text = label ? label.textContent.trim() : '';
      s.querySelectorAll('.noUi-handle').forEach(function (h) {
        if (text && h.getAttribute('aria-label') !== text) { h.setAttribute('aria-label', text); }
      });
    });
    document.querySelectorAll('.wt-lab .wt-live .widget-html-content').forEach(function (c) {
      if (c.getAttribute('aria-live') !== 'polite') {
        c.setAttribute('aria-live', 'polite'); c.setAttribute('role', 'status');
      }
    });
    document.querySelectorAll('.wt-lab button.jupyter-button').forEach(function (b) {
      if (!b.textContent.trim() && !b.getAttribute('aria-label') && b.title) { b.setAttribute('aria-label', b.title); }
    });
    // a slider says its value as its read-out shows it (a selection slider's handle holds only an index)
    document.querySelectorAll('.wt-lab .widget-slider').forEach(function (s) {
      var readout = s.querySelector('.widget-readout');
      var text = readout ? readout.textContent.trim() : '';
      s.querySelectorAll('.noUi-handle').forEach(function (h) {
        if (text && h.getAttribute('aria-valuetext') !== text) { h.setAttribute('aria-valuetext', text); }
      });
      // the read-out is not a Tab stop of its own: the handle's arrow keys, Home and End change the value
      if (readout && readout.getAttribute('tabindex') !== '-1') { readout.setAttribute('tabindex', '-1'); }
    });
    // a closed dropdown's arrow keys are its own: JupyterLab's notebook shortcuts would take them and move to
    // another cell (ipywidgets #3912); Lumino runs no shortcut for a key pressed in an element marked so
    document.querySelectorAll('.wt-lab select').forEach(function (s) {
      if (!s.hasAttribute('data-lm-suppress-shortcuts')) { s.setAttribute('data-lm-suppress-shortcuts', 'true'); }
    });
  }
  // A focused control that is disabled (Next step at the end, Train while training) hands the focus on to
  // the next control of its lab, or the one before it when it is the last, instead of dropping it to the page.
  var CONTROLS = 'button, input, select, textarea, [role=slider]';
  function handOn(el) {
    var lab = el.closest('.wt-lab');
    var active = document.activeElement;
    if (!lab || (active && active !== document.body && active !== el)) { return; }  // the student moved on
    var all = Array.from(lab.querySelectorAll(CONTROLS)).filter(function (c) {
      return c === el || (!c.disabled && c.tabIndex >= 0 && c.offsetParent !== null);
    });
    var at = all.indexOf(el);
    var next = all.slice(at + 1).concat(all.slice(0, at).reverse())[0];
    if (next) { next.focus(); }
  }
  document.addEventListener('focusin', function (e) {
    window.wtFocused = e.target.closest && e.target.closest('.wt-lab') ? e.target : null;
  });
  function watch(mutations) {
    mutations.forEach(function (m) {
      if (m.type === 'attributes' && m.attributeName === 'disabled' && m.target.disabled
          && m.target === window.wtFocused) { handOn(m.target); }
    });
    window.wtNameControls();
  }
  var queued = false;
  window.wtNameControls = function () {
    if (queued) { return; }
    queued = true;
    requestAnimationFrame(function () { queued = false; name(); });
  };
  new MutationObserver(watch).observe(document.body, {
    childList: true, subtree: true, characterData: true, attributes: true,
    attributeFilter: ['disabled', 'aria-valuenow', 'aria-valuetext'],
  });
  window.wtNameControls();
})();
"""


LIVE = "live line"  # in a LabBox's children: where the summary line goes (default: first, under the stylesheet)


class LabBox(widgets.VBox):
    """A lab's root: the stylesheet, then the lab's children; ``live`` is its summary line (see ``say``)."""

    def __init__(self, children, name: str, **kwargs):
        self._style = widgets.HTML(f"<style>{_html.STYLESHEET}</style>", layout=widgets.Layout(display="none"))
        self._style.add_class("wt-style")
        self.live = widgets.HTML()
        self.live.add_class("wt-live")
        self.live.add_class(f"wt-{name}-live")
        children = list(children) if LIVE in children else [LIVE, *children]
        super().__init__([self._style, *(self.live if c is LIVE else c for c in children)], **kwargs)
        self.add_class("wt-lab")
        self.add_class(f"wt-{name}")

    def say(self, text: str) -> None:
        """Set the summary line (plain text; it is escaped). Only a change of text is sent to the page."""
        value = f'<div class="wt-said">{_html.esc(text)}</div>'
        if self.live.value != value:
            self.live.value = value

    @property
    def said(self) -> str:
        """The summary line's text, as a screen reader reads it."""
        import html
        import re

        return html.unescape(re.sub(r"<[^>]+>", "", self.live.value))

    def _ipython_display_(self, **kwargs):
        from IPython.display import Javascript, display

        display(Javascript(NAME_CONTROLS_JS))
        display(self._repr_mimebundle_(**kwargs), raw=True)
