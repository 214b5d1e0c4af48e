package executor

import (
	"fmt"
	"strings"
)

// Verb is the first word of an executor name: what the executor does to
// its object. The vocabulary is closed, so that a planner (often a small
// local model) meets one word per intent and never two near-synonyms.
type Verb string

// The closed vocabulary of verbs. Each answers one question about the
// object, and no two overlap:
const (
	// Find searches a collection by criteria and returns the matches
	// (find_repositories, find_issues). Not "search", "query", "lookup".
	Find Verb = "find"
	// List enumerates a collection without criteria (list_branches).
	List Verb = "list"
	// Read returns one item the caller already names, or its contents
	// (read_file_contents, read_issue). Not "get", "fetch", "show".
	Read Verb = "read"
	// Create makes a new item and fails if it exists (create_issue).
	Create Verb = "create"
	// Update changes an existing item in place (update_issue).
	Update Verb = "update"
	// Write creates or replaces an item's contents whole
	// (write_file_contents). Not "put", "upsert", "save".
	Write Verb = "write"
	// Delete removes an item (delete_branch). Not "remove".
	Delete Verb = "delete"
	// Send delivers a message to someone outside (send_message).
	Send Verb = "send"
)

// Verbs is the vocabulary, in the order of the documentation.
var Verbs = []Verb{Find, List, Read, Create, Update, Write, Delete, Send}

// synonyms maps words often written for a verb to the verb of the
// vocabulary that means it, for the error message.
var synonyms = map[string]Verb{
	"get": Read, "fetch": Read, "show": Read, "view": Read,
	"search": Find, "query": Find, "lookup": Find,
	"put": Write, "upsert": Write, "save": Write, "set": Write,
	"remove": Delete, "rm": Delete,
	"add": Create, "new": Create, "open": Create, "make": Create,
	"edit": Update, "modify": Update, "patch": Update,
	"post": Send, "notify": Send,
	"ls": List, "enumerate": List,
}

// objectSynonyms maps the words one provider writes for an object another
// names otherwise to the object's name in the catalog: GitLab's merge
// request is GitHub's (and the catalog's) pull request.
var objectSynonyms = map[string]string{
	"merge_request":  "pull_request",
	"merge_requests": "pull_requests",
}

// MaxNameLen bounds an executor name, in bytes.
const MaxNameLen = 64

// verbList is the vocabulary as the error messages write it.
func verbList() string {
	s := make([]string, len(Verbs))
	for i, v := range Verbs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// ParseName splits an executor name into its verb and object and checks
// both: the verb one of [Verbs], the object one or more lowercase ASCII
// words of letters and digits joined by '_', each starting with a letter.
// Errors wrap [ErrInvalidName] and list the allowed verbs.
func ParseName(name string) (Verb, string, error) {
	if name == "" || len(name) > MaxNameLen {
		return "", "", fmt.Errorf("%w: %q: 1 to %d characters, written verb_object like create_issue", ErrInvalidName, name, MaxNameLen)
	}
	verb, object, ok := strings.Cut(name, "_")
	if !ok || object == "" {
		return "", "", fmt.Errorf("%w: %q has no object: write verb_object like create_issue, the verb one of %s", ErrInvalidName, name, verbList())
	}
	known := false
	for _, v := range Verbs {
		if string(v) == verb {
			known = true
			break
		}
	}
	if !known {
		hint := ""
		if s, ok := synonyms[verb]; ok {
			hint = fmt.Sprintf(" (for %q write %q)", verb, s)
		}
		return "", "", fmt.Errorf("%w: %q: verb %q is not in the vocabulary; use one of %s%s", ErrInvalidName, name, verb, verbList(), hint)
	}
	for w := range strings.SplitSeq(object, "_") {
		if !lowerWord(w) {
			return "", "", fmt.Errorf("%w: %q: object %q must be lowercase words of letters and digits joined by '_', each starting with a letter", ErrInvalidName, name, object)
		}
	}
	return Verb(verb), object, nil
}

// lowerWord reports whether w is a lowercase ASCII word: a letter, then
// letters and digits.
func lowerWord(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CanonicalName returns the executor name a tool name stands for: the tool
// name itself when it is verb_object from the vocabulary, or with its verb
// replaced when the verb is a common synonym ("search_repositories" →
// "find_repositories", "get_file_contents" → "read_file_contents"). A name
// whose object joins two actions ("create_or_update_file") has no
// canonical name: it is not one action. An object a provider names its
// own way is the catalog's ("create_merge_request" →
// "create_pull_request").
func CanonicalName(tool string) (string, error) {
	name := tool
	if verb, object, ok := strings.Cut(tool, "_"); ok {
		if v, syn := synonyms[verb]; syn {
			verb = string(v)
		}
		if o, syn := objectSynonyms[object]; syn {
			object = o
		}
		name = verb + "_" + object
	}
	_, object, err := ParseName(name)
	if err != nil {
		return "", err
	}
	for w := range strings.SplitSeq(object, "_") {
		if w == "or" || w == "and" {
			return "", fmt.Errorf("%w: %q joins two actions with %q: an executor is one action", ErrInvalidName, tool, w)
		}
	}
	return name, nil
}
