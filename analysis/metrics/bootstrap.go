package metrics

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Interval is a confidence interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// BootstrapMean returns the percentile bootstrap confidence interval at the
// given level (e.g. 0.95) for the mean of values: it draws resamples samples
// of len(values) values with replacement from rng, takes each mean, and
// returns the (1-level)/2 and (1+level)/2 quantiles of those means (linear
// interpolation between order statistics). With no values it returns NaNs;
// with one value, or resamples < 1, the interval is that mean alone.
func BootstrapMean(values []float64, resamples int, level float64, rng *rand.Rand) Interval {
	n := len(values)
	if n == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	if n == 1 || resamples < 1 {
		m := 0.0
		for _, v := range values {
			m += v
		}
		m /= float64(n)
		return Interval{m, m}
	}
	means := make([]float64, resamples)
	for r := range means {
		s := 0.0
		for range n {
			s += values[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	sort.Float64s(means)
	return Interval{quantile(means, (1-level)/2), quantile(means, (1+level)/2)}
}

// quantile returns the p-quantile of sorted xs by linear interpolation
// between the order statistics at positions (len-1)*p.
func quantile(xs []float64, p float64) float64 {
	pos := p * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i]*(1-f) + xs[i+1]*f
}
