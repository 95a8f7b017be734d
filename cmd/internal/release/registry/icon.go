package registry

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// IconSize is the registry's icon size: 16×16.
const IconSize = 16

// paints are the fill and stroke values the registry allows (lowercased):
// an icon takes the editor's colour.
var paints = []string{"currentcolor", "none", "inherit"}

// CheckIcon applies the registry's icon rules (validate_icon) to svg,
// parsed as XML: no comments (they break the registry's MDX pages); an
// <svg> root 16×16 and square (its width and height, else its viewBox;
// a viewBox given with a width and height must be square too, so the
// drawing is not stretched); every fill and stroke — attributes, style
// attributes and <style> rules — currentColor, none or inherit, and
// currentColor at least once. Every problem wraps ErrIcon.
func CheckIcon(svg []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var errs []error
	var root *xml.StartElement
	var inStyle, current bool
	paint := func(where, value string) {
		v := strings.ToLower(strings.TrimSpace(value))
		if f := strings.Fields(v); len(f) > 0 {
			v = f[0]
		}
		switch {
		case v == "currentcolor":
			current = true
		case !slices.Contains(paints, v):
			errs = append(errs, fmt.Errorf("%w: %s %q is a colour (use currentColor or none)", ErrIcon, where, value))
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: not XML: %w", ErrIcon, err)
		}
		switch t := tok.(type) {
		case xml.Comment:
			errs = append(errs, fmt.Errorf("%w: it has a comment", ErrIcon))
		case xml.StartElement:
			if root == nil {
				root = &t
			}
			inStyle = t.Name.Local == "style"
			for _, a := range t.Attr {
				switch {
				case a.Name.Space != "":
				case a.Name.Local == "fill", a.Name.Local == "stroke":
					paint(a.Name.Local, a.Value)
				case a.Name.Local == "style":
					declarations(a.Value, paint)
				}
			}
		case xml.EndElement:
			inStyle = false
		case xml.CharData:
			if inStyle {
				declarations(string(t), paint)
			}
		}
	}
	if root == nil || root.Name.Local != "svg" {
		return fmt.Errorf("%w: the root element is not <svg>", ErrIcon)
	}
	if err := checkIconSize(root); err != nil {
		errs = append(errs, err)
	}
	if !current {
		errs = append(errs, fmt.Errorf("%w: no fill or stroke is currentColor", ErrIcon))
	}
	return errors.Join(errs...)
}

// declarations calls paint for each fill and stroke declaration of CSS
// (a style attribute, or the rules of a <style> element).
func declarations(css string, paint func(where, value string)) {
	for _, decl := range strings.FieldsFunc(css, func(r rune) bool { return r == ';' || r == '{' || r == '}' }) {
		name, value, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		if name = strings.ToLower(strings.TrimSpace(name)); name == "fill" || name == "stroke" {
			paint("style "+name, value)
		}
	}
}

// checkIconSize checks the root's size as the registry reads it: width
// and height when both are numbers (a unit suffix dropped), else the
// viewBox's.
func checkIconSize(root *xml.StartElement) error {
	attr := func(name string) string {
		for _, a := range root.Attr {
			if a.Name.Space == "" && a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	w, errW := length(attr("width"))
	h, errH := length(attr("height"))
	vb := strings.Fields(attr("viewBox"))
	var vw, vh float64
	var errV error = errors.New("no viewBox")
	if len(vb) == 4 {
		vw, errV = strconv.ParseFloat(vb[2], 64)
		if errV == nil {
			vh, errV = strconv.ParseFloat(vb[3], 64)
		}
	}
	if errW != nil || errH != nil {
		if errV != nil {
			return fmt.Errorf("%w: no width and height, nor a viewBox", ErrIcon)
		}
		w, h = vw, vh
	}
	switch {
	case w != h:
		return fmt.Errorf("%w: %gx%g is not square", ErrIcon, w, h)
	case errV == nil && vw != vh:
		return fmt.Errorf("%w: viewBox %q is not square", ErrIcon, attr("viewBox"))
	case w != IconSize:
		return fmt.Errorf("%w: %gx%g is not %dx%d", ErrIcon, w, h, IconSize, IconSize)
	}
	return nil
}

// length parses an SVG length as the registry does: a number, a unit or
// % after it dropped.
func length(s string) (float64, error) {
	s = strings.TrimRightFunc(strings.TrimSpace(s), func(r rune) bool {
		return r == '%' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	})
	return strconv.ParseFloat(s, 64)
}
