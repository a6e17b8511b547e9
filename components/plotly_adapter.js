// The one place that reads plotly.js internals (concatenated after the prelude plotly_lib.js, before the modules
// that use it). plotly.js has no public API for where a drawn figure's axes sit in pixels, and the components
// need it for three things:
//
//   - `_fullLayout` (the layout plotly computed: defaults filled in, margins pushed by legends and colour bars):
//     whether a figure has been drawn yet, its size in pixels and its font, read by the canvas that paints the
//     thousands of points under plotly's SVG (canvas_layer.js);
//   - `_fullLayout.<axis>._offset` and `._length` (an axis's first pixel and its length in pixels, from the
//     figure's top left corner): where the canvas paints, clipped to each plot area;
//   - `<axis>.l2p` and `<axis>.p2l` (an axis's value-to-pixel map and its inverse, for linear axes): where a
//     point is painted (canvas_layer.js) and which policy a click on the gradient field picks (polytope.js).
//
// tests/test_browser_plotly_adapter.py draws a figure of known margins with the plotly.js of the installed plotly
// wheel and checks what these functions return, so a plotly.js that renames or changes any of them fails there;
// tests/test_js_layout.py fails when any other component file reads a plotly field whose name starts with "_".

/** Whether plotly has drawn `gd` (its computed layout exists). */
function plotlyDrawn(gd) {
  return Boolean(gd?._fullLayout);
}

/** The drawn figure's {width, height} in CSS pixels and its font family, or null before it is drawn. */
function plotlyFigureBox(gd) {
  const full = gd?._fullLayout;
  if (!full) return null;
  return { width: full.width, height: full.height, fontFamily: full.font?.family, fontColor: full.font?.color };
}

/** The axis `ref` of a drawn figure ("x", "y2", "x domain"...) as pixel geometry, or null if it has no such
 * axis: {offset, length} (its first pixel and its length, from the figure's top left corner; y runs down),
 * toPixel(v) (a value's pixel, from the figure's corner) and toValue(px) (a pixel from the plot area's start
 * back to a value). */
function plotlyAxis(gd, ref) {
  const full = gd?._fullLayout;
  const id = String(ref ?? "").split(" ")[0];
  const name = id.replace(/^([xy])/, "$1axis");
  const axis = full && /^[xy]axis\d*$/.test(name) ? full[name] : null;
  if (!axis) return null;
  const offset = axis._offset;
  return {
    offset,
    length: axis._length,
    toPixel: (v) => offset + axis.l2p(v),
    toValue: (px) => axis.p2l(px),
  };
}
