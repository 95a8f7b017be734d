package bridge

import (
	"bytes"
	"html"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// This file recognises frame markers in untrusted text however they are
// disguised. Matching runs on a normalised copy of the text; what is
// replaced is the stretch of the original text that produced the match, so
// text without a marker reaches the model byte for byte.

// markerRemoved replaces every marker look-alike in untrusted text.
const markerRemoved = "[marker removed]"

// markerCore matches the words of a frame marker in normalised text
// ("mcp untrusted content", any separators between them); leadStart finds
// what may precede them (angle brackets, a slash, "end").
// markerShuffled matches the three words in any order and each forwards or
// backwards: bidi controls (an override, an embedding or an isolate around
// a part of the text) make stored order and displayed order differ, so
// the words of "<<<END_MCP_\u202eTNETNOC_DETSURTNU\u202c" render as a
// marker. "rn" stands for m as it renders in many fonts.
var (
	markerCore     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:m|rn)cp[^\pL\pN]*untrusted[^\pL\pN]*c[o0]ntent`) })
	markerShuffled = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(markerWord + `[^\pL\pN]*` + markerWord + `[^\pL\pN]*` + markerWord)
	})
)

// markerWord is one word of a marker, forwards or backwards.
const markerWord = `(?:mcp|rncp|pcm|pcrn|untrusted|detsurtnu|c[o0]ntent|tnetn[o0]c)`

// maxUnescapes bounds the rounds of HTML entity decoding (&amp;lt; takes two).
const maxUnescapes = 4

// maxEntity is the longest entity normalize decodes, "&" and ";" included.
const maxEntity = 40

// normalize returns the form of s that markers are matched in: every rune
// replaced by its compatibility decomposition (NFKD: full-width, math
// alphanumerics, circled and small forms become ASCII), combining marks,
// default-ignorable code points, bidi and other format controls, variation
// selectors, tag characters and C0/C1 controls but newline and tab
// removed, look-alikes of the marker's letters and brackets folded
// (confusables), letters lowercased, and HTML entities decoded (repeatedly,
// a bounded number of times). Safe for concurrent use.
func normalize(s string) string {
	if plainASCII(s) {
		return strings.ToLower(s)
	}
	return string(normalizeSpans(s, false).text)
}

// plainASCII reports whether s is printable ASCII, newlines and tabs with
// no entity: the text whose normal form is its lower case.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f || c == '&' || c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}

// spanned is text derived from an original string of n bytes with, when
// tracked, the offset in the original where the source of each byte
// starts (src, in order). A byte's source ends where the next source
// starts, so what normalisation removed after it goes with it.
type spanned struct {
	text []byte
	src  []int32
	n    int
}

// origin returns where the source of byte i of t starts in the original.
func (t *spanned) origin(i int) int {
	if t.src == nil {
		return i
	}
	return int(t.src[i])
}

// span returns the stretch of the original that bytes [i, j) of t came
// from (j > i).
func (t *spanned) span(i, j int) (int, int) {
	if t.src == nil {
		return i, j
	}
	for k := j; k < len(t.src); k++ {
		if t.src[k] != t.src[j-1] {
			return int(t.src[i]), int(t.src[k])
		}
	}
	return int(t.src[i]), t.n
}

// add appends s as coming from the original's offset from.
func (t *spanned) add(s string, from int) {
	n := len(t.text)
	t.text = append(t.text, s...)
	t.sources(n, from)
}

// addRune appends r as coming from the original's offset from.
func (t *spanned) addRune(r rune, from int) {
	n := len(t.text)
	if r < utf8.RuneSelf {
		t.text = append(t.text, byte(r))
	} else {
		t.text = utf8.AppendRune(t.text, r)
	}
	t.sources(n, from)
}

// sources records, when tracked, that the bytes of t from n on come from
// the original's offset from.
func (t *spanned) sources(n, from int) {
	if t.src != nil {
		for range len(t.text) - n {
			t.src = append(t.src, int32(from))
		}
	}
}

// derived returns an empty spanned for text derived from in.
func derived(in *spanned, track bool) *spanned {
	t := &spanned{text: make([]byte, 0, len(in.text)), n: in.n}
	if track {
		t.src = make([]int32, 0, len(in.text))
	}
	return t
}

// normalizeSpans is normalize, with the sources of its bytes in s when
// track is set.
func normalizeSpans(s string, track bool) *spanned {
	t := foldRunes(&spanned{text: []byte(s), n: len(s)}, track)
	for range maxUnescapes {
		if bytes.IndexByte(t.text, '&') < 0 {
			break
		}
		u, changed := unescape(t)
		if !changed {
			break
		}
		t = foldRunes(u, track)
	}
	return t
}

// foldRunes applies the per-rune part of normalize to in.
func foldRunes(in *spanned, track bool) *spanned {
	out := derived(in, track)
	for i := 0; i < len(in.text); {
		from := in.origin(i)
		if c := in.text[i]; c < utf8.RuneSelf {
			if !invisible(rune(c)) {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				out.addRune(rune(c), from)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(in.text[i:])
		if r != utf8.RuneError || n > 1 { // else not UTF-8: nothing a marker is made of
			d := norm.NFKD.Properties(in.text[i:]).Decomposition()
			if d == nil {
				d = in.text[i : i+n]
			}
			for _, dr := range string(d) {
				if !invisible(dr) {
					out.addRune(unicode.ToLower(foldConfusable(dr)), from)
				}
			}
		}
		i += n
	}
	return out
}

// invisible reports whether r renders as nothing (or only changes how its
// neighbours render): removed before matching.
func invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r >= 0x7f && r < 0xa0: // C0, DEL, C1
		return true
	case r < 0xa0:
		return false
	}
	return unicode.Is(invisibles(), r)
}

// invisibles are the format characters (bidi and join controls, tags and
// U+180E among them), combining marks, other default-ignorable code points
// and variation selectors. Read only.
var invisibles = sync.OnceValue(func() *unicode.RangeTable {
	return rangetable.Merge(unicode.Cf, unicode.Mn, unicode.Me,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
})

// foldConfusable maps a look-alike of a character of the markers (the
// letters of "MCP UNTRUSTED CONTENT END", "<", ">" and the separators) to
// it; other runes are returned as they are. Compatibility forms
// (full-width, math alphanumerics, small forms) are not here:
// decomposition handles them.
func foldConfusable(r rune) rune {
	if c, ok := confusables()[r]; ok {
		return c
	}
	return r
}

// confusables are the look-alikes of the marker alphabet that compatibility
// decomposition leaves alone (Cyrillic, Greek, Armenian, Coptic, Cherokee,
// Lisu, small capitals, brackets, CJK and syllabic strokes). Read only.
var confusables = sync.OnceValue(func() map[rune]rune {
	return map[rune]rune{
		// m
		'ᗰ': 'm', 'ᙏ': 'm', 'М': 'm', 'м': 'm', 'Μ': 'm', 'Ϻ': 'm', 'ϻ': 'm', 'Ⲙ': 'm', 'ⲙ': 'm', 'Ꮇ': 'm', 'ꓟ': 'm', 'ᴍ': 'm', 'ɱ': 'm',
		// c
		'ᑕ': 'c', 'С': 'c', 'с': 'c', 'Ϲ': 'c', 'ϲ': 'c', 'Ⲥ': 'c', 'ⲥ': 'c', 'Ꮯ': 'c', 'ꮯ': 'c', 'ꓚ': 'c', 'ᴄ': 'c', 'ꞓ': 'c',
		// p
		'ᑭ': 'p', 'Р': 'p', 'р': 'p', 'Ρ': 'p', 'ρ': 'p', 'Ⲣ': 'p', 'ⲣ': 'p', 'Ꮲ': 'p', 'ꓑ': 'p', 'ᴘ': 'p', 'ϱ': 'p',
		// u
		'ᑌ': 'u', 'ᑘ': 'u', 'Ս': 'u', 'ս': 'u', 'ꓴ': 'u', 'υ': 'u', 'ᴜ': 'u', 'ʋ': 'u', 'μ': 'u', 'Ʋ': 'u', 'ꞟ': 'u',
		// n
		'Ν': 'n', 'Ⲛ': 'n', 'ꓠ': 'n', 'ɴ': 'n', 'ո': 'n', 'п': 'n', 'η': 'n', 'ŋ': 'n',
		// t
		'Т': 't', 'т': 't', 'Τ': 't', 'τ': 't', 'Ⲧ': 't', 'ⲧ': 't', 'Ꭲ': 't', 'ꓔ': 't', 'ᴛ': 't', 'ƚ': 't',
		// r
		'ᚱ': 'r', 'Ꭱ': 'r', 'Ꮢ': 'r', 'ꓣ': 'r', 'ʀ': 'r', 'г': 'r', 'ᴦ': 'r', 'ꭇ': 'r', 'ɾ': 'r',
		// s
		'Ѕ': 's', 'ѕ': 's', 'Ꮪ': 's', 'ꓢ': 's', 'ꜱ': 's', 'Տ': 's', 'ʂ': 's', 'ꮪ': 's',
		// e
		'Е': 'e', 'е': 'e', 'Ε': 'e', 'ε': 'e', 'Ꭼ': 'e', 'ꓰ': 'e', 'ᴇ': 'e', 'є': 'e', 'ҽ': 'e', '℮': 'e', 'Ҽ': 'e',
		// d
		'ᗪ': 'd', 'ᗞ': 'd', 'Ꭰ': 'd', 'ꓓ': 'd', 'ᴅ': 'd', 'ԁ': 'd', 'ɗ': 'd', 'ꮷ': 'd',
		// o
		'〇': 'o', '০': 'o', '໐': 'o', 'ଠ': 'o', '๐': 'o', '٥': 'o', '۵': 'o', 'ᴑ': 'o',
		'О': 'o', 'о': 'o', 'Ο': 'o', 'ο': 'o', 'σ': 'o', 'Օ': 'o', 'օ': 'o', 'Ⲟ': 'o', 'ⲟ': 'o', 'ꓳ': 'o', 'ᴏ': 'o', 'ø': 'o', 'Ø': 'o', 'ɵ': 'o',
		// < (one or several)
		'‹': '<', '«': '<', '〈': '<', '⟨': '<', '˂': '<', '❮': '<', '❬': '<', '❰': '<', '≪': '<', '⋘': '<',
		'⟪': '<', '《': '<', '⧼': '<', '⦑': '<', '⋖': '<', 'ᐸ': '<', '⊲': '<', '⧀': '<',
		// > (one or several)
		'›': '>', '»': '>', '〉': '>', '⟩': '>', '˃': '>', '❯': '>', '❭': '>', '❱': '>', '≫': '>', '⋙': '>',
		'⟫': '>', '》': '>', '⧽': '>', '⦒': '>', '⋗': '>', 'ᐳ': '>', '⊳': '>', '⧁': '>',
		// separators that are letters: _ - / look-alikes
		'ˍ': '_', 'ー': '-', 'ㅡ': '-', '一': '-', 'ᅳ': '-', 'ᐨ': '-', 'ⲻ': '-', 'ノ': '/', '〳': '/', 'Ⳇ': '/', '丿': '/', 'ᐟ': '/',
	}
})

// unescape decodes the HTML entities of in ("&lt;", "&#60;", "&#x3c;",
// "&lt" and the rest of html.UnescapeString's table) and reports whether
// there was any. A decoded entity's bytes all come from where it starts.
func unescape(in *spanned) (*spanned, bool) {
	out := derived(in, in.src != nil)
	changed := false
	for i := 0; i < len(in.text); {
		if end, dec, ok := entityAt(in.text, i); ok {
			out.add(dec, in.origin(i))
			changed = true
			i = end
			continue
		}
		j := len(in.text)
		if k := bytes.IndexByte(in.text[i+1:], '&'); k >= 0 {
			j = i + 1 + k
		}
		out.text = append(out.text, in.text[i:j]...)
		if out.src != nil {
			out.src = append(out.src, in.src[i:j]...)
		}
		i = j
	}
	return out, changed
}

// entityAt decodes the entity at text[i], if there is one: it returns
// where the entity ends and what it stands for.
func entityAt(text []byte, i int) (int, string, bool) {
	if text[i] != '&' {
		return 0, "", false
	}
	j := i + 1
	for j < len(text) && j-i < maxEntity && isEntityByte(text[j]) {
		j++
	}
	if j < len(text) && text[j] == ';' {
		j++
	}
	tok := string(text[i:j])
	dec := html.UnescapeString(tok)
	return j, dec, dec != tok
}

func isEntityByte(c byte) bool {
	return c == '#' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Neutralize returns text with every look-alike of a frame marker
// replaced (the rule for text inside frames), for text that enters model
// text unframed but must not end or forge a frame: the user's and the
// project's instructions files, a compaction's summary. Text with none is
// returned as it is. Safe for concurrent use.
func Neutralize(text string) string { return neutralizeMarkers(text, normalize(text)) }

// neutralizeMarkers replaces every stretch of text that renders as a frame
// marker by markerRemoved; norm is normalize(text). Text with none is
// returned as it is.
func neutralizeMarkers(text, norm string) string {
	// Every marker holds "untrusted", forwards or backwards: a cheap test
	// spares the scan of almost all text.
	if !strings.Contains(norm, "untrusted") && !strings.Contains(norm, "detsurtnu") || !markerShuffled().MatchString(norm) {
		return text
	}
	if len(text) > math.MaxInt32 {
		return markerRemoved // beyond what spans can hold; never a result's size
	}
	t := normalizeSpans(text, true)
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, m := range markerMatches(t.text) {
		from, to := t.span(m.start, m.end)
		if to <= last {
			continue // inside the stretch of the previous marker
		}
		b.WriteString(text[last:max(from, last)])
		b.WriteString(markerRemoved)
		last = to
	}
	b.WriteString(text[last:])
	return b.String()
}

// match is where a marker lies in normalised text: [start, end).
type match struct{ start, end int }

// markerMatches returns where norm holds marker words, forwards (with
// what leads them) or shuffled, in order of their start.
func markerMatches(norm []byte) []match {
	fwd, any := markerCore().FindAllIndex(norm, -1), markerShuffled().FindAllIndex(norm, -1)
	all := make([]match, 0, len(fwd)+len(any))
	for _, m := range fwd {
		all = append(all, match{leadStart(norm, m[0]), m[1]})
	}
	for _, m := range any {
		if !slices.ContainsFunc(fwd, func(f []int) bool { return f[0] <= m[0] && m[1] <= f[1] }) {
			all = append(all, match{m[0], m[1]})
		}
	}
	slices.SortFunc(all, func(a, b match) int { return a.start - b.start })
	return all
}

// leadStart returns where the marker whose words start at i of norm
// begins: before the "end", slash and angle brackets that precede the
// words, each at most leadGap bytes of separators from the next.
func leadStart(norm []byte, i int) int {
	start := i
	j := skipSeparators(norm, i)
	if bytes.HasSuffix(norm[:j], []byte("end")) {
		start = j - 3
		j = skipSeparators(norm, start)
	}
	for j > 0 && norm[j-1] == '<' {
		for j > 0 && norm[j-1] == '<' {
			j--
		}
		start = j
		j = skipSeparators(norm, j)
	}
	return start
}

// leadGap bounds the separators leadStart steps over at a time, in bytes.
const leadGap = 8

// skipSeparators returns where the separators that end at i of norm
// start: at most leadGap bytes of runes that are neither letters, digits
// nor '<'.
func skipSeparators(norm []byte, i int) int {
	j := i
	for j > 0 {
		r, n := utf8.DecodeLastRune(norm[:j])
		if r == '<' || unicode.IsLetter(r) || unicode.IsNumber(r) || i-(j-n) > leadGap {
			break
		}
		j -= n
	}
	return j
}
