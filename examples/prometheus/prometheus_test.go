// Package prometheus_test checks the Prometheus rules shipped in
// examples/prometheus: promtool accepts them and their unit tests pass,
// every leasewrap_ series they name is one leasewrap writes, and
// docs/METRICS.md shows them as they are.
package prometheus_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

const rules, tests = "leasewrap.rules.yml", "leasewrap.rules.test.yml"

func promtool(t *testing.T, args ...string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	testutil.Need(t, "promtool (Debian: apt-get install prometheus)", err)
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRulesCheck(t *testing.T) { promtool(t, "check", "rules", rules) }

func TestRulesUnitTests(t *testing.T) { promtool(t, "test", "rules", tests) }

// TestRulesNameOnlyWhatLeasewrapWrites: a rule on a series leasewrap does
// not write would never fire.
func TestRulesNameOnlyWhatLeasewrapWrites(t *testing.T) {
	var b bytes.Buffer
	tf, err := metrics.Textfile(nil, metrics.Run{Name: "x", Kind: "claim", Outcome: metrics.OutcomeSuccess, Start: time.Now(), End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	b.Write(tf)
	ttl, none := metrics.NewLive("claim", "k"), metrics.NewLive("flock", "/l")
	ttl.Acquired(time.Now().Add(time.Minute))
	ttl.Started(1, time.Now())
	none.Acquired(time.Time{})
	metrics.Write(&b, ttl.Families(time.Now()))
	metrics.Write(&b, none.Families(time.Now()))
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(b.String(), -1) {
		written[m[1]] = true
	}
	for _, f := range []string{rules, tests} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range regexp.MustCompile(`\bleasewrap_[a-z_]+`).FindAllString(string(src), -1) {
			if !written[name] {
				t.Errorf("%s names %s, which leasewrap does not write", f, name)
			}
		}
	}
}

// TestDocsShowTheseRules: docs/METRICS.md holds the rules file verbatim.
func TestDocsShowTheseRules(t *testing.T) {
	src, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```yaml\n"+string(src)+"```\n")) {
		t.Fatalf("docs/METRICS.md does not show %s as it is (in a ```yaml block)", rules)
	}
}
