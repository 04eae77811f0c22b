package main

import "strconv"

// cell makes s safe for one tabwriter column: "" becomes "-", and anything
// but printable ASCII is Go-quoted so every row keeps its columns.
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
