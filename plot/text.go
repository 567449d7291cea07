package plot

import (
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// supText is gonum's plain text handler with superscripts: "^{…}" is
// drawn smaller and raised, as in "10^{−4}". The fonts gonum/plot embeds
// lack the Unicode superscript zero and minus, and its LaTeX handler
// refuses any non-ASCII character in a title, so powers of ten are
// written this way. Text without "^{" is drawn exactly as text.Plain does.
type supText struct{ text.Plain }

// handler is the text handler of every figure.
var handler = supText{text.Plain{Fonts: font.DefaultCache}}

const (
	supScale = 0.7  // a superscript's size, of the text's
	supRaise = 0.42 // its baseline's height above the text's, of the text's size
)

// segment is a run of text, superscript or not.
type segment struct {
	s   string
	sup bool
}

// segments splits a line at its "^{…}" marks.
func segments(line string) []segment {
	var out []segment
	for line != "" {
		i := strings.Index(line, "^{")
		if i < 0 {
			break
		}
		j := strings.Index(line[i:], "}")
		if j < 0 {
			break
		}
		if i > 0 {
			out = append(out, segment{line[:i], false})
		}
		out = append(out, segment{line[i+2 : i+j], true})
		line = line[i+j+1:]
	}
	if line != "" {
		out = append(out, segment{line, false})
	}
	return out
}

// plain returns the text with its superscript marks removed: what a
// reader reads, for tests.
func plain(s string) string {
	var b strings.Builder
	for _, sg := range segments(s) {
		b.WriteString(sg.s)
	}
	return b.String()
}

func (h supText) width(line string, fnt font.Font) vg.Length {
	face := h.Fonts.Lookup(fnt, fnt.Size)
	small := h.Fonts.Lookup(fnt, fnt.Size*supScale)
	var w vg.Length
	for _, sg := range segments(line) {
		if sg.sup {
			w += small.Width(sg.s)
		} else {
			w += face.Width(sg.s)
		}
	}
	return w
}

// Box is text.Plain's box, widened for superscripts.
func (h supText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	_, height, depth = h.Plain.Box(txt, fnt)
	return h.width(txt, fnt), height, depth
}

// Draw is text.Plain's Draw, drawing each line segment by segment.
func (h supText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	small := h.Fonts.Lookup(sty.Font, sty.Font.Size*supScale)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	ht := sty.Height(txt)
	pt.Y += ht*vg.Length(sty.YAlign) - fnt.Extents().Ascent
	for i, line := range lines {
		xoffs := vg.Length(sty.XAlign) * h.width(line, sty.Font)
		n := vg.Length(len(lines) - i)
		at := pt.Add(vg.Point{X: xoffs, Y: n * sty.Font.Size})
		for _, sg := range segments(line) {
			if sg.sup {
				c.FillString(small, at.Add(vg.Point{Y: supRaise * sty.Font.Size}), sg.s)
				at.X += small.Width(sg.s)
			} else {
				c.FillString(fnt, at, sg.s)
				at.X += fnt.Width(sg.s)
			}
		}
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}
