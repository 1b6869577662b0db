"""The labs' one stylesheet (see ``_html`` for the functions that use its classes, ``_widgets.LabBox``
for how every lab carries it)."""

#: The labs' one stylesheet. ``LabBox`` (see ``_widgets``) puts it in every lab, so the same classes style a
#: live lab, a saved one and the lecture edition's HTML page; only sizes and colours computed per value stay
#: inline (a bar's width, a heatmap cell's fill).
STYLESHEET = """
.wt-lab { color: #1e1e1e; }
.wt-lab .wt-mono, .wt-heatmap, .wt-bars, .wt-table, .wt-shape { font-family: ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; font-size: 12px; line-height: 1.3; }
.wt-lab .wt-text { line-height: 1.4; }
.wt-lab .wt-muted { color: #595959; }
.wt-lab .wt-small { font-size: 12px; line-height: 1.4; }
.wt-lab .wt-h { font-weight: bold; margin: 6px 0 2px 0; }
.wt-lab .wt-title { font-size: 15px; font-weight: bold; margin: 6px 0 2px 0; }
.wt-lab .wt-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.wt-lab .wt-said { line-height: 1.4; padding: 4px 8px; margin: 4px 0; border-left: 4px solid #2166ac;
  background: #eef4fb; font-size: 13px; }
.wt-lab .wt-scroll { overflow: auto; }
.wt-lab .wt-scroll:focus-visible, .wt-lab .jupyter-button:focus-visible, .wt-lab .noUi-handle:focus-visible,
.wt-lab.wt-lab input:focus, .wt-lab.wt-lab select:focus, .wt-lab.wt-lab [contenteditable]:focus {
  outline: 3px solid #b35806; outline-offset: 2px; }
.wt-lab.wt-lab input:focus { box-shadow: 0 0 0 3px #b35806; }  /* a text box's outline can be taken away by the
  widgets' own styles; the ring stays */
.wt-lab .wt-token { border: 1px solid #767676; padding: 1px 6px; margin-right: 3px; }
.wt-lab .wt-token-new { border: 2px solid #2166ac; font-weight: bold; }
.wt-heatmap { border-collapse: collapse; margin: 2px 0; }
.wt-heatmap th { padding: 1px 4px; color: #595959; font-weight: normal; text-align: center; white-space: nowrap; }
.wt-heatmap th.wt-corner { font-style: italic; }
.wt-heatmap th.wt-row { text-align: right; }
.wt-heatmap th.wt-on { font-weight: bold; color: #000; }
.wt-heatmap th.wt-col-on { border-bottom: 2px solid #222; }
.wt-heatmap td.wt-cell { padding: 2px 3px; text-align: right; border: 1px solid white; }
.wt-heatmap td.wt-cell-on { border: 2px solid #222; }
.wt-bars { margin: 2px 0; }
.wt-bar { display: flex; align-items: center; gap: 6px; margin: 1px 0; line-height: 16px; }
.wt-bar .wt-bar-label { text-align: right; }
.wt-bar-on .wt-bar-label { font-weight: bold; }
.wt-bar .wt-bar-track { display: inline-block; background: #f1f1f1; border: 1px solid #767676; }
.wt-bar .wt-bar-fill { display: block; height: 14px; }
.wt-shape { font-size: 13px; }
.wt-table { border-collapse: collapse; }
.wt-table th, .wt-table td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; }
.wt-table th { border-bottom: 1px solid #767676; }
.wt-table tr.wt-total { font-weight: bold; }
.wt-table tr.wt-row-on { background: #fff3c4; }
.wt-note { padding: 4px 8px; margin: 4px 0; font-size: 13px; line-height: 1.4; border-left: 4px solid #2166ac;
  background: #eef4fb; }
.wt-note-ok { border-left-color: #2e7d32; background: #edf7ed; }
.wt-note-error { border-left-color: #b2182b; background: #fdecea; }
"""
