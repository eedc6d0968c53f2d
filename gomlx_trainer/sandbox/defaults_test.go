package sandbox

import (
	"reflect"
	"testing"
)

// TestWithDefaultsFillsOnlyZeroFields checks that a zero Config takes every
// value of Default, and that a field set by the caller is kept while the
// others are filled.
func TestWithDefaultsFillsOnlyZeroFields(t *testing.T) {
	if got, want := (Config{}).withDefaults(), Default(); !reflect.DeepEqual(got, want) {
		t.Fatalf("zero Config with defaults = %+v, want Default() = %+v", got, want)
	}
	d := reflect.ValueOf(Default())
	for i := range d.NumField() {
		f := d.Type().Field(i)
		if f.Type.Kind() == reflect.String || d.Field(i).IsZero() {
			continue // no default to take
		}
		var c Config
		set := reflect.ValueOf(&c).Elem().Field(i)
		set.SetInt(d.Field(i).Int() + 1) // a value the caller chose
		got := reflect.ValueOf(c.withDefaults())
		for j := range d.NumField() {
			want := d.Field(j)
			if j == i {
				want = set
			}
			if !reflect.DeepEqual(got.Field(j).Interface(), want.Interface()) {
				t.Errorf("with only %s set: %s = %v, want %v", f.Name, d.Type().Field(j).Name, got.Field(j), want)
			}
		}
	}
}
