package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ConfigReport is what 'skillgate config check' finds (--json prints it).
type ConfigReport struct {
	// Path is the configuration file checked: --config, else
	// DATA/config.yaml.
	Path string `json:"path"`
	// Found is false when no --config was given and DATA/config.yaml does
	// not exist: skillgate then runs with its defaults.
	Found bool `json:"found"`
	// Valid is true when every command would load the file.
	Valid bool `json:"valid"`
	// Problems are the file's problems, one a line, each naming the file,
	// the line or field, and what to write instead.
	Problems []string `json:"problems"`
}

// WriteText renders r for a person: the verdict on stdout, the problems on
// problems.
func (r *ConfigReport) WriteText(w, problems io.Writer) error {
	var err error
	switch {
	case !r.Found:
		_, err = fmt.Fprintf(w, "no configuration file: %s does not exist; skillgate runs with its defaults (examples/config.yaml shows every key)\n", r.Path)
	case r.Valid:
		_, err = fmt.Fprintf(w, "config %s: valid\n", r.Path)
	default:
		for _, p := range r.Problems {
			if _, err = fmt.Fprintln(problems, p); err != nil {
				return err
			}
		}
	}
	return err
}

// CheckConfig loads the configuration file as every command does
// ([App.Config]: its shape, then its values, the signing keys' files
// included) and reports what is wrong with it. A file --config names that
// cannot be read is a problem of the report; the error is only for what
// stops the check itself.
func (a *App) CheckConfig() (*ConfigReport, error) {
	r := &ConfigReport{Path: a.opts.ConfigPath, Found: true, Problems: []string{}}
	if r.Path == "" {
		r.Path = filepath.Join(a.Data(), "config.yaml")
		if _, err := os.Stat(r.Path); errors.Is(err, os.ErrNotExist) {
			r.Found = false
			r.Valid = true
			return r, nil
		}
	}
	if _, err := a.Config(); err != nil {
		r.Problems = strings.Split(err.Error(), "\n")
		return r, nil
	}
	r.Valid = true
	return r, nil
}
