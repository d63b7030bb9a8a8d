package c2x86

import (
	"fmt"
	"sort"
	"strings"
)

// metadataDirectives are the directives StripMetadata removes: each
// carries only metadata for a linker, a debugger or another object format
// (nothing the program computes, stores, aligns or runs), and GNU as for
// x86-64 ELF rejects each as an unknown pseudo-op. Compilers print them in
// `-S` output, so models trained on that output write them too. The list is
// explicit on purpose: any other directive, known or not, reaches the
// assembler and is judged by assembling and running.
var metadataDirectives = map[string]string{
	// clang (LLVM) on ELF; `-fno-addrsig` drops the first two.
	".addrsig":     "LLVM address-significance table, for the linker's identical-code folding",
	".addrsig_sym": "marks a symbol in the LLVM address-significance table",
	".cg_profile":  "LLVM call-graph profile, for the linker's function ordering",
	// clang and gcc for Darwin (Mach-O), common in published listings.
	".subsections_via_symbols": "Mach-O: lets the linker dead-strip per symbol",
	".build_version":           "Mach-O: the target OS version load command",
	".macosx_version_min":      "Mach-O: the minimum macOS version load command",
	".data_region":             "Mach-O: marks data in code for disassemblers",
	".end_data_region":         "Mach-O: ends a .data_region",
}

// MetadataDirectives lists the directive names StripMetadata removes,
// sorted.
func MetadataDirectives() []string {
	names := make([]string, 0, len(metadataDirectives))
	for n := range metadataDirectives {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StripStats counts the directives StripMetadata removed, by name.
type StripStats map[string]int

// Total is the number of directives removed.
func (s StripStats) Total() int {
	n := 0
	for _, c := range s {
		n += c
	}
	return n
}

// String is "" when nothing was removed, else e.g. "removed 3
// metadata-only directives GNU as rejects: .addrsig (1), .addrsig_sym (2)".
func (s StripStats) String() string {
	if s.Total() == 0 {
		return ""
	}
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s (%d)", n, s[n])
	}
	return fmt.Sprintf("removed %d metadata-only directives GNU as rejects: %s", s.Total(), strings.Join(parts, ", "))
}

// StripMetadata removes the statements that are one of the metadata-only
// directives GNU as rejects (see MetadataDirectives; names match in any
// case), wherever they stand: alone on a line, after labels, or between
// ';' separators. Comments, strings and every other statement are kept
// byte for byte, and the output has exactly the input's lines, so
// assembler line numbers still point at the model's text.
func StripMetadata(src string) (string, StripStats) {
	st := StripStats{}
	lines := strings.Split(src, "\n")
	inBlock := false
	for i, line := range lines {
		lines[i] = stripLine(line, &inBlock, st)
	}
	return strings.Join(lines, "\n"), st
}

// stripLine removes the metadata statements of one line, counting them in
// st.
func stripLine(line string, inBlock *bool, st StripStats) string {
	s := scanLine(line, inBlock)
	type span struct{ from, to int }
	var cut []span
	from := 0
	ends := append(append([]int{}, s.semis...), s.codeEnd)
	afterData := false
	for k, end := range ends {
		text := string(s.clean[from:end])
		if k > 0 && isCommentSegment(text, afterData) {
			break // the rest of the line is a ';' comment
		}
		body, lead := stripLabels(text)
		name, _ := splitDirective(body)
		lname := strings.ToLower(name)
		if _, ok := metadataDirectives[lname]; ok {
			st[lname]++
			cut = append(cut, span{from + lead, from + len(strings.TrimRight(text, " \t"))})
		}
		afterData = dataDirectives[lname]
		from = end + 1
	}
	if len(cut) == 0 {
		return line
	}
	var b strings.Builder
	pos := 0
	for _, c := range cut {
		b.WriteString(line[pos:c.from])
		pos = c.to
	}
	b.WriteString(line[pos:])
	return b.String()
}
