// Package plural writes a count with its noun for people to read: "1
// skill", "2 skills", "0 policies". Every message that prints a count of
// things uses it, so that none says "1 skills".
package plural

import "strconv"

// Of returns n and the noun in the form n takes: one when n is 1 (or -1),
// many otherwise.
func Of(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many)
}

// Noun returns the form of a noun (or verb: " is", " are") that n takes,
// for a message that writes the count itself.
func Noun(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}
