package main

import "strconv"

// cell makes s safe for one tabwriter column of a table for people: ""
// becomes "-", and a value with anything but printable ASCII (a tab or
// newline that would split the row, a control character, a wide or
// combining character that tabwriter would count as one column) is shown
// Go-quoted with escapes, so every row keeps its columns. The JSON output
// carries values as they are.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}
