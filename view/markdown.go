package view

import (
	"html"
	"regexp"
	"strconv"
	"strings"
)

// Markdown converts the Markdown of a bench table's results.md to HTML:
// headings, paragraphs, pipe tables, lists, fenced code blocks and, in
// text, `code`, **bold**, *emphasis* and http(s) links. Everything else
// is text, escaped: the output holds no HTML of the input's.
func Markdown(src []byte) string {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	var b strings.Builder
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "```"):
			flush()
			b.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</code></pre>\n")
		case heading.MatchString(t):
			flush()
			m := heading.FindStringSubmatch(t)
			n := string(rune('0' + len(m[1])))
			b.WriteString("<h" + n + ">" + inline(m[2]) + "</h" + n + ">\n")
		case strings.HasPrefix(t, "|") && i+1 < len(lines) && separator.MatchString(strings.TrimSpace(lines[i+1])):
			flush()
			b.WriteString("<table>\n<thead><tr>")
			for _, c := range cells(t) {
				b.WriteString("<th>" + inline(c) + "</th>")
			}
			b.WriteString("</tr></thead>\n<tbody>\n")
			for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				b.WriteString("<tr>")
				for _, c := range cells(strings.TrimSpace(lines[i])) {
					b.WriteString("<td>" + inline(c) + "</td>")
				}
				b.WriteString("</tr>\n")
			}
			i--
			b.WriteString("</tbody>\n</table>\n")
		case bullet.MatchString(t):
			flush()
			b.WriteString("<ul>\n")
			for ; i < len(lines) && bullet.MatchString(strings.TrimSpace(lines[i])); i++ {
				b.WriteString("<li>" + inline(bullet.ReplaceAllString(strings.TrimSpace(lines[i]), "")) + "</li>\n")
			}
			i--
			b.WriteString("</ul>\n")
		default:
			para = append(para, t)
		}
	}
	flush()
	return b.String()
}

var (
	heading   = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	separator = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)
	bullet    = regexp.MustCompile(`^([-*+]|\d+\.)\s+`)
	code      = regexp.MustCompile("`([^`]+)`")
	bold      = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	em        = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*]*)\*`)
	link      = regexp.MustCompile(`\[([^\]]+)\]\((https?://[^)\s]+)\)`)
)

// cells splits a table row at its unescaped pipes.
func cells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	parts := strings.Split(strings.ReplaceAll(row, `\|`, "\x00"), "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", "|"))
	}
	return parts
}

// inline escapes s and applies the inline markup; code spans are kept
// from the rest.
func inline(s string) string {
	var codes []string
	s = code.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, "<code>"+html.EscapeString(m[1:len(m)-1])+"</code>")
		return "\x01" + strconv.Itoa(len(codes)-1) + "\x01"
	})
	s = html.EscapeString(s)
	s = link.ReplaceAllString(s, `<a href="$2">$1</a>`)
	s = bold.ReplaceAllString(s, "<strong>$1</strong>")
	s = em.ReplaceAllString(s, "$1<em>$2</em>")
	for i, c := range codes {
		s = strings.Replace(s, "\x01"+strconv.Itoa(i)+"\x01", c, 1)
	}
	return s
}
