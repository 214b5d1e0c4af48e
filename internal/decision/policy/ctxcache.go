package policy

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"

	"github.com/cedar-policy/cedar-go/types"
)

// Bounds of the context cache.
const (
	// maxContextKey bounds a cache key in bytes; longer contexts are built
	// every time.
	maxContextKey = 256
	// maxContextEntries bounds the cache; when full it starts over.
	maxContextEntries = 4096
	// maxCachedArgNames: a policy set that reads more argument names than
	// this is not cached (the key would cost a lookup per name).
	maxCachedArgNames = 16
)

// contextCache reuses Cedar contexts. Building one (cedar's NewRecord
// clones, sorts and hashes every record) is the largest cost of a
// decision, while the arguments policies read are usually few and
// low-cardinality (a client, a mode, a limit). The key is the exact values
// of the arguments the policies read, in name order, plus the delegation
// flag and the session, so a hit returns the context that would have been
// built. Records are immutable, so sharing them is safe. The cache belongs
// to one PolicySet and dies with it.
type contextCache struct {
	mu sync.RWMutex
	m  map[string]types.Record
}

// key appends the cache key to buf. cacheable is false for contexts the
// cache does not hold: a policy reads the arguments whole, too many
// names, a read argument that is not a string, number or boolean, or a key
// longer than maxContextKey.
func (c *contextCache) key(buf []byte, set *PolicySet, args map[string]any, delegated bool, sid string, hasSID bool, exec string, hasExec bool, acct string, hasAcct bool) ([]byte, bool) {
	if set.fullArgs || len(set.sortedArgNames) > maxCachedArgNames {
		return nil, false
	}
	if delegated {
		buf = append(buf, 'D')
	}
	if hasSID {
		if len(sid) > maxContextKey/2 {
			return nil, false
		}
		buf = append(buf, 'S')
		buf = appendLenPrefixed(buf, sid)
	}
	if hasExec {
		if len(exec) > maxContextKey/4 {
			return nil, false
		}
		buf = append(buf, 'X')
		buf = appendLenPrefixed(buf, exec)
	}
	if hasAcct {
		if len(acct) > maxContextKey/4 {
			return nil, false
		}
		buf = append(buf, 'A')
		buf = appendLenPrefixed(buf, acct)
	}
	for i, name := range set.sortedArgNames {
		v, ok := args[name]
		if !ok {
			continue
		}
		if len(buf)+len(name)+24 > maxContextKey {
			return nil, false
		}
		buf = strconv.AppendInt(buf, int64(i), 10)
		switch v := v.(type) {
		case string:
			if len(buf)+len(v)+2 > maxContextKey {
				return nil, false
			}
			buf = append(buf, 's')
			buf = appendLenPrefixed(buf, v)
		case float64:
			if math.IsNaN(v) {
				return nil, false
			}
			buf = append(buf, 'f')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		case bool:
			buf = append(buf, 'b')
			buf = strconv.AppendBool(buf, v)
		case int:
			buf = append(buf, 'i')
			buf = strconv.AppendInt(buf, int64(v), 10)
		case int64:
			buf = append(buf, 'i')
			buf = strconv.AppendInt(buf, v, 10)
		case json.Number:
			if len(buf)+len(v)+2 > maxContextKey {
				return nil, false
			}
			buf = append(buf, 'n')
			buf = appendLenPrefixed(buf, string(v))
		default:
			return nil, false
		}
		buf = append(buf, ';')
	}
	return buf, true
}

// appendLenPrefixed appends "len:s", so that no value can be read as
// another's continuation.
func appendLenPrefixed(buf []byte, s string) []byte {
	buf = strconv.AppendInt(buf, int64(len(s)), 10)
	buf = append(buf, ':')
	return append(buf, s...)
}

func (c *contextCache) get(key []byte) (types.Record, bool) {
	c.mu.RLock()
	r, ok := c.m[string(key)]
	c.mu.RUnlock()
	return r, ok
}

func (c *contextCache) put(key string, r types.Record) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxContextEntries {
		c.m = make(map[string]types.Record, 64)
	}
	c.m[key] = r
	c.mu.Unlock()
}
