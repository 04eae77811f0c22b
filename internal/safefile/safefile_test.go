package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsPlanted(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	for _, tc := range []struct {
		name  string
		plant func(at string) error
		flag  int
		ok    bool
	}{
		{"symlink/write", func(at string) error { return os.Symlink(victim, at) }, os.O_WRONLY | os.O_APPEND | os.O_CREATE, false},
		{"symlink/read", func(at string) error { return os.Symlink(victim, at) }, os.O_RDONLY, false},
		{"hardlink/write", func(at string) error { return os.Link(victim, at) }, os.O_RDWR | os.O_CREATE, false},
		{"hardlink/read", func(at string) error { return os.Link(victim, at) }, os.O_RDONLY, true},
		{"fifo/write", func(at string) error { return syscall.Mkfifo(at, 0o666) }, os.O_WRONLY | os.O_CREATE, false},
		{"fifo/rdwr", func(at string) error { return syscall.Mkfifo(at, 0o666) }, os.O_RDWR | os.O_CREATE, false},
		{"fifo/read", func(at string) error { return syscall.Mkfifo(at, 0o666) }, os.O_RDONLY, false},
		{"directory", func(at string) error { return os.Mkdir(at, 0o755) }, os.O_RDONLY, false},
		{"absent/create", func(string) error { return nil }, os.O_WRONLY | os.O_CREATE, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-"))
			if err := tc.plant(at); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				f, err := Open(at, tc.flag, 0o666)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Open hung")
			}
			if tc.ok && err != nil {
				t.Errorf("want opened, have %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrUnsafe) {
				t.Errorf("want a refusal matching ErrUnsafe, have %v", err)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "v" {
		t.Errorf("victim changed: %q", b)
	}
}

func TestCreateTempSkipsTakenNames(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	first := filepath.Join(dir, ".tmp-write-x")
	os.Link(victim, first)
	f, name, err := CreateTemp(func(i int) (string, error) {
		if i == 0 {
			return first, nil
		}
		suffix, err := RandomHex(8)
		return first + "." + suffix, err
	}, os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if name == first || !strings.HasPrefix(name, first+".") {
		t.Errorf("want a fresh name beside %s, have %s", first, name)
	}
	if b, _ := os.ReadFile(victim); string(b) != "v" {
		t.Errorf("victim changed: %q", b)
	}
	// Every candidate taken: an error, nothing written.
	_, _, err = CreateTemp(func(int) (string, error) { return first, nil }, os.O_WRONLY, 0o666)
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("want fs.ErrExist after every name was taken, have %v", err)
	}
	// No name (no random bytes for it): that error, nothing created.
	noEntropy := errors.New("no random bytes")
	tries := 0
	_, _, err = CreateTemp(func(i int) (string, error) {
		tries++
		if i == 0 {
			return first, nil
		}
		return filepath.Join(dir, "never"), noEntropy
	}, os.O_WRONLY, 0o666)
	if !errors.Is(err, noEntropy) || tries != 2 {
		t.Errorf("want the name's error after 2 tries, have %v after %d", err, tries)
	}
	if _, serr := os.Lstat(filepath.Join(dir, "never")); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("a name given with an error was created: %v", serr)
	}
}

func TestRandomHex(t *testing.T) {
	a, err := RandomHex(8)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomHex(8)
	if len(a) != 16 || strings.Trim(a, "0123456789abcdef") != "" || a == b {
		t.Errorf("want two different 16-digit lowercase hex strings, have %q and %q", a, b)
	}
}

func TestReadBoundedRefusesLarger(t *testing.T) {
	p := filepath.Join(t.TempDir(), "owner")
	os.WriteFile(p, make([]byte, 11), 0o644)
	var tl *TooLargeError
	if _, err := ReadBounded(p, 10); !errors.As(err, &tl) {
		t.Errorf("want *TooLargeError, have %v", err)
	}
	if b, err := ReadBounded(p, 11); err != nil || len(b) != 11 {
		t.Errorf("want 11 bytes, have %d (%v)", len(b), err)
	}
}

func TestOpenTrustedLinkFollowsOnlyOurOwnLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared.log")
	link := filepath.Join(dir, "events.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f, err := OpenTrustedLink(link, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("our own link: want followed, have %v", err)
	}
	f.WriteString("x\n")
	f.Close()
	if b, _ := os.ReadFile(target); string(b) != "x\n" {
		t.Errorf("target: want %q, have %q", "x\n", b)
	}
	if os.Geteuid() != 0 {
		t.Skip("a link owned by another user needs root to make")
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	other := filepath.Join(dir, "planted")
	os.Symlink(victim, other)
	if err := os.Lchown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTrustedLink(other, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666); !errors.Is(err, ErrUnsafe) {
		t.Errorf("another user's link: want a refusal, have %v", err)
	}
	chain := filepath.Join(dir, "chain")
	os.Symlink(other, chain) // ours, but its target is a link
	if _, err := OpenTrustedLink(chain, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666); !errors.Is(err, ErrUnsafe) {
		t.Errorf("our link to another user's link: want a refusal, have %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "v" {
		t.Errorf("victim changed: %q", b)
	}
}
