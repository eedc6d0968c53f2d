package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/mathrl/mathrl/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure sizes and resolution.
const (
	Width  = 8 * vg.Inch // width of a single figure
	Height = 5 * vg.Inch // height of a single figure
	DPI    = 150         // PNG resolution
)

// sans is the typeface of every text: Liberation Sans, embedded in gonum/plot,
// so figures look the same on every machine.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette holds colours that stay distinct for colour-blind readers (Okabe-Ito).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{100, 100, 100, 255}, // grey
}

// Color returns the i-th colour of the figures' palette.
func Color(i int) color.Color { return palette[i%len(palette)] }

// glyphs are the point shapes of successive series, so that series drawn on
// top of each other stay apart.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{},
	draw.PyramidGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// glyph returns the point shape of the i-th series.
func glyph(i int) draw.GlyphDrawer { return glyphs[i%len(glyphs)] }

// markedLine returns the line and points of the i-th series in the house
// style: its colour, 2 pt wide, marked with its glyph.
func markedLine(xys plotter.XYs, i int) (*plotter.Line, *plotter.Scatter, error) {
	return seriesLine(xys, series{Color: Color(i), Width: 2, Shape: glyph(i), Radius: 3})
}

// series is how one line of a plot looks: its colour, its width and its
// points' shape and radius (in points; radius 0: no points shown).
type series struct {
	Color  color.Color
	Width  float64
	Shape  draw.GlyphDrawer
	Radius float64
}

// seriesLine returns the line and points of xys drawn as st says.
func seriesLine(xys plotter.XYs, st series) (*plotter.Line, *plotter.Scatter, error) {
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, err
	}
	line.Color, points.Color = st.Color, st.Color
	line.Width = vg.Points(st.Width)
	points.Shape, points.Radius = st.Shape, vg.Points(st.Radius)
	return line, points, nil
}

// newPlot returns a plot with the house fonts and a light grid. Its
// constructor adds the data and the legend entries, then calls legendAbove.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 15)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 13)
		a.Tick.Label.Font = font.From(sans, 11)
		a.Tick.Marker = niceTicks{}
	}
	p.Legend.TextStyle.Font = font.From(sans, 11)
	p.Legend.Padding = vg.Points(2)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{220}
	grid.Horizontal.Color = color.Gray{220}
	p.Add(grid)
	return p
}

// legendGap separates the legend from the title above it and from the data
// area below it.
const legendGap vg.Length = 6 // points

// legendAbove moves the legends of ps out of their data areas into a band
// of their own between the title and the data, left-aligned with the data,
// so that they cover no bar, line, point or label whatever the data. The band
// is as tall as the tallest of the legends, so that panels drawn side by side
// keep their titles and data areas level. Call it once, after the last
// Legend.Add: it widens each title's padding by the band, so each plot must
// have a title.
func legendAbove(ps ...*plot.Plot) {
	var band vg.Length
	for _, p := range ps {
		r := p.Legend.Rectangle(draw.Canvas{})
		band = max(band, r.Max.Y-r.Min.Y)
	}
	if band <= 0 {
		return
	}
	for _, p := range ps {
		// Legend.Draw puts the top of the first entry at the data area's
		// top, less the font's descent, plus YOffs.
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.XOffs = 0
		p.Legend.YOffs = band + legendGap + p.Legend.TextStyle.FontExtents().Descent
		p.Title.Padding += band + legendGap
	}
}

// Save writes p as base.png and base.svg (base is a path without extension),
// each atomically, at the package's figure size.
func Save(p *plot.Plot, base string) error {
	return SaveGrid([][]*plot.Plot{{p}}, Width, Height, base)
}

// SaveGrid writes a grid of plots (rows of equal length) as one figure of
// size w×h, as base.png and base.svg.
func SaveGrid(grid [][]*plot.Plot, w, h vg.Length, base string) error {
	if len(grid) == 0 || len(grid[0]) == 0 {
		return fmt.Errorf("plots: %s: empty grid", base)
	}
	for _, ext := range []string{"png", "svg"} {
		path := base + "." + ext
		err := atomicfile.Write(path, func(out io.Writer) error {
			return WriteGrid(out, grid, w, h, ext)
		})
		if err != nil {
			return fmt.Errorf("plots: %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

// WriteGrid draws a grid of plots into out as "png" or "svg".
func WriteGrid(out io.Writer, grid [][]*plot.Plot, w, h vg.Length, format string) error {
	var c draw.Canvas
	var wt io.WriterTo
	switch format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
		c, wt = draw.New(img), vgimg.PngCanvas{Canvas: img}
	case "svg":
		svg := vgsvg.New(w, h)
		c, wt = draw.New(svg), svg
	default:
		return fmt.Errorf("plots: unknown format %q", format)
	}
	drawGrid(c, grid)
	_, err := wt.WriteTo(out)
	return err
}

// drawGrid draws a grid of plots (rows of equal length) onto c, their data
// areas aligned.
func drawGrid(c draw.Canvas, grid [][]*plot.Plot) {
	if len(grid) == 1 && len(grid[0]) == 1 {
		grid[0][0].Draw(c)
	} else {
		tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]),
			PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12),
			PadX: vg.Points(18), PadY: vg.Points(18)}
		canvases := plot.Align(grid, tiles, c)
		for i, row := range grid {
			for j, p := range row {
				if p != nil {
					p.Draw(canvases[i][j])
				}
			}
		}
	}
}

// niceTicks labels an axis every 1, 2 or 5 × 10^n, aiming at about six labels,
// with an unlabelled minor tick halfway. With Integer set the step is at least 1
// and minor ticks fall on integers only.
type niceTicks struct{ Integer bool }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if t.Integer && step < 1 {
		step = 1
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	minor := step / 2
	if t.Integer && minor < 1 {
		minor = step
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / minor); i*minor <= hi+minor*1e-9; i++ {
		v := i * minor
		if math.Abs(math.Remainder(v, step)) < step*1e-6 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// PNG returns p drawn at the package's figure size as PNG bytes, e.g. for a
// notebook's gonbui.DisplayPng.
func PNG(p *plot.Plot) ([]byte, error) {
	return GridPNG([][]*plot.Plot{{p}}, Width, Height)
}

// GridPNG returns a grid of plots drawn at size w×h as PNG bytes.
func GridPNG(grid [][]*plot.Plot, w, h vg.Length) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteGrid(&b, grid, w, h, "png"); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
