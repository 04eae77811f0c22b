package claim

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Options configure a Claims handle.
type Options struct {
	// Root is the explicit claims root (holding .fno/claims). "" routes node:,
	// dispatch:, reconcile: and session: keys to $FNO_CLAIMS_ROOT, else $HOME.
	Root string
	// EventsDir holds .fno/events.jsonl ("" = cwd); a non-empty $FNO_EVENTS_PATH
	// is the full events path and wins.
	EventsDir string
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	// Logger receives best-effort failures; nil discards them.
	Logger *slog.Logger
}

// Claims performs the claim protocol's verbs, for one goroutine at a time.
type Claims struct {
	root      string
	eventsDir string
	getenv    func(string) string
	log       *slog.Logger

	// Test seams.
	now        func() time.Time
	hostname   func() string
	machineID  func() string
	createTime func(pid int) (int64, bool)
	selfPID    func() int
	// mutexPoll and mutexWait bound the recovery-mutex wait (20 ms / 5 s).
	mutexPoll, mutexWait time.Duration
	// eventsLockWait bounds the events.jsonl mutex wait (2 s).
	eventsLockWait time.Duration
	// writeOwner writes a mutex owner token (a fault seam).
	writeOwner func(f *os.File, tok []byte) error
	// eventsDenied holds events paths already warned about as not writable.
	eventsDenied map[string]bool
}

const (
	recoveryPoll     = 20 * time.Millisecond
	recoveryMaxWait  = 5 * time.Second
	acquireAttempts  = 5
	staleMutexSteal  = 120 * time.Second
	dirMutexPoll     = 100 * time.Millisecond
	eventsLockBudget = 2 * time.Second
)

// New returns a Claims handle.
func New(o Options) *Claims {
	c := &Claims{
		root:           o.Root,
		eventsDir:      o.EventsDir,
		getenv:         o.Getenv,
		log:            o.Logger,
		now:            time.Now,
		hostname:       systemHostname,
		machineID:      machineIDOnce,
		createTime:     processCreateTimeMs,
		selfPID:        os.Getpid,
		mutexPoll:      recoveryPoll,
		mutexWait:      recoveryMaxWait,
		eventsLockWait: eventsLockBudget,
		writeOwner:     writeOwnerFile,
	}
	if c.getenv == nil {
		c.getenv = os.Getenv
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c *Claims) nowMs() int64 { return c.now().UnixMilli() }

// Path returns the claim file of key: <root>/.fno/claims/<enc>.lock.
func (c *Claims) Path(key string) (string, error) {
	root, err := rootFor(key, c.root, c.getenv)
	if err != nil {
		return "", err
	}
	return claimFile(root, key), nil
}

// Dir returns the claims directory for key (or of the explicit/global root).
func (c *Claims) Dir(key string) (string, error) {
	if key == "" {
		root := c.root
		if root == "" {
			root = globalRoot(c.getenv)
		}
		if root == "" {
			return "", ErrNoRoot
		}
		return claimsDir(root), nil
	}
	root, err := rootFor(key, c.root, c.getenv)
	if err != nil {
		return "", err
	}
	return claimsDir(root), nil
}

// EventsPath is the audit log path: $FNO_EVENTS_PATH if set and non-empty,
// else <EventsDir or cwd>/.fno/events.jsonl.
func (c *Claims) EventsPath() string {
	if p := c.getenv("FNO_EVENTS_PATH"); p != "" {
		return p
	}
	dir := c.eventsDir
	if dir == "" {
		dir = "."
	}
	return filepath.Join(dir, ".fno", "events.jsonl")
}
