package discover

// VerifyRelForTest reports whether a state may name rel as a directory.
func VerifyRelForTest(rel string) bool { return validRel([]byte(rel)) }
