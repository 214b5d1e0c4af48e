package app

import (
	"path/filepath"
	"testing"
)

// TestStoreLocation: --store, then SKILLGATE_STORE, then the
// configuration's store:, then DATA/skillgate.db.
func TestStoreLocation(t *testing.T) {
	data := t.TempDir()
	withConfig := t.TempDir()
	write(t, withConfig, map[string]string{"config.yaml": "store: postgres://db.internal/skillgate\n"})
	tests := []struct {
		name, data, flag, env, want string
	}{
		{"default", data, "", "", filepath.Join(data, "skillgate.db")},
		{"config", withConfig, "", "", "postgres://db.internal/skillgate"},
		{"environment over config", withConfig, "", "/srv/other.db", "/srv/other.db"},
		{"flag over environment", withConfig, "postgresql://h/db", "/srv/other.db", "postgresql://h/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Options{Store: tt.flag, Data: tt.data, Getenv: func(k string) string {
				if k == "SKILLGATE_STORE" {
					return tt.env
				}
				return ""
			}})
			if got, err := a.storeLocation(); err != nil || got != tt.want {
				t.Errorf("storeLocation() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
