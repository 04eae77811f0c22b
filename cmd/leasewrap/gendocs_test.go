package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/internal/kongdoc"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestSiblingStubsMatchTheSiblings: the help-only stubs leasewrap lists
// for the kinds another executable serves name the same verbs, with the
// same help, as that executable's own description (siblings/*.json, kept
// current by each sibling's TestModelDescription).
func TestSiblingStubsMatchTheSiblings(t *testing.T) {
	root, err := describeLeasewrap() // Graft fails when the verbs differ
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if k.sibling == nil {
			continue
		}
		p, err := kong.New(&tree{}, k.command(), kong.Name("leasewrap"), kong.Writers(io.Discard, io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		stub := kongdoc.Describe(p.Model.Node).Command(k.name)
		real := root.Command(k.name)
		if real == nil || len(real.Commands) == 0 {
			t.Fatalf("%s: no verbs in %s's description", k.name, k.sibling.exe)
		}
		if real.Help != k.help {
			t.Errorf("%s: the table of kinds says %q, %s says %q", k.name, k.help, k.sibling.exe, real.Help)
		}
		for i, v := range stub.Commands {
			if have := real.Commands[i]; v.Help != have.Help {
				t.Errorf("%s %s: the stub says %q, %s says %q", k.name, v.Name, v.Help, k.sibling.exe, have.Help)
			}
		}
	}
}

// TestManPagesAndCompletionsNameEveryFlag: every kind has its man page,
// and every verb and flag of every kind (the siblings' included) is in
// that page and in the three completion scripts.
func TestManPagesAndCompletionsNameEveryFlag(t *testing.T) {
	root, err := describeLeasewrap()
	if err != nil {
		t.Fatal(err)
	}
	man := kongdoc.Man(root, "leasewrap")
	scripts := map[string]string{
		"bash": string(kongdoc.Bash(root, "leasewrap")),
		"zsh":  string(kongdoc.Zsh(root, "leasewrap")),
		"fish": string(kongdoc.Fish(root, "leasewrap")),
	}
	roff := func(s string) string { return strings.ReplaceAll(s, "-", `\-`) }
	checked := 0
	for _, k := range kinds {
		page := string(man["leasewrap-"+k.name+".1"])
		node := root.Command(k.name)
		if page == "" || node == nil {
			t.Errorf("%s: no man page (have %d pages)", k.name, len(man))
			continue
		}
		if !strings.Contains(string(man["leasewrap.1"]), roff("leasewrap-"+k.name)) {
			t.Errorf("leasewrap.1 does not refer to leasewrap-%s(1)", k.name)
		}
		for _, v := range node.Commands {
			if !strings.Contains(page, ".SH "+`"`+strings.ToUpper(k.name+" "+v.Name)+`"`) {
				t.Errorf("leasewrap-%s.1 has no section for %s %s", k.name, k.name, v.Name)
			}
			for sh, want := range map[string]string{
				"bash": "\t'" + k.name + "') REPLY='",
				"zsh":  "\t'" + k.name + "') reply=(",
				"fish": `at '\''` + k.name + `'\''' -a '` + v.Name + `'`,
			} {
				s := scripts[sh]
				i := strings.Index(s, want)
				if line, _, _ := strings.Cut(s[max(i, 0):], "\n"); i < 0 || !strings.Contains(line, v.Name) {
					t.Errorf("%s completion does not offer %s %s", sh, k.name, v.Name)
				}
			}
			for _, f := range v.Flags {
				checked++
				if !strings.Contains(page, `\fB\-\-`+roff(f.Name)+`\fR`) {
					t.Errorf("leasewrap-%s.1 does not describe %s %s --%s", k.name, k.name, v.Name, f.Name)
				}
				if !strings.Contains(scripts["bash"], "--"+f.Name) {
					t.Errorf("bash completion does not offer %s %s --%s", k.name, v.Name, f.Name)
				}
				if !strings.Contains(scripts["zsh"], "'--"+f.Name+":") {
					t.Errorf("zsh completion does not offer %s %s --%s", k.name, v.Name, f.Name)
				}
				if !strings.Contains(scripts["fish"], `at '\''`+k.name+" "+v.Name+`'\''' -l `+f.Name) {
					t.Errorf("fish completion does not offer %s %s --%s", k.name, v.Name, f.Name)
				}
			}
		}
	}
	for _, f := range root.Flags {
		if !strings.Contains(string(man["leasewrap.1"]), `\fB\-\-`+roff(f.Name)+`\fR`) {
			t.Errorf("leasewrap.1 does not describe --%s", f.Name)
		}
	}
	if checked < 100 {
		t.Errorf("want every flag of every verb checked, have %d", checked)
	}
}

// TestManPagesRender renders every page with groff, as man(1) does, and
// fails on any warning.
func TestManPagesRender(t *testing.T) {
	_, err := exec.LookPath("groff")
	testutil.Need(t, "groff (Debian's groff-base, which man-db needs)", err)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := realMain([]string{"gendocs", "--man", dir}, &out, &errb); code != 0 {
		t.Fatalf("gendocs: exit %d: %s", code, errb.String())
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) != len(kinds)+1 {
		t.Fatalf("want %d pages, have %q", len(kinds)+1, pages)
	}
	for _, p := range pages {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-K", "utf8", "-ww", "-rLL=80n", "-P-c", "-P-b", "-P-u", p)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s: %v\n%s", filepath.Base(p), err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "NAME") || !strings.Contains(stdout.String(), "SYNOPSIS") {
			t.Errorf("%s renders without NAME and SYNOPSIS:\n%s", filepath.Base(p), stdout.String())
		}
	}
}

// completionCase is a command line being completed (the last word is
// the cursor's) and candidates the completion must offer, or must not.
type completionCase struct {
	line      []string
	want, not []string
}

var completionCases = []completionCase{
	{line: []string{"leasewrap", ""}, want: []string{"flock", "claim", "kube", "lock", "once", "help", "completion"}, not: []string{"gendocs"}},
	{line: []string{"leasewrap", "fl"}, want: []string{"flock"}, not: []string{"claim"}},
	{line: []string{"leasewrap", "kube", ""}, want: []string{"run", "holder"}},
	{line: []string{"leasewrap", "-q", "claim", ""}, want: []string{"run", "acquire", "list"}},
	{line: []string{"leasewrap", "flock", "run", "--wa"}, want: []string{"--wait"}},
	{line: []string{"leasewrap", "kube", "run", "--name"}, want: []string{"--namespace"}},
	{line: []string{"leasewrap", "lock", "run", "--end"}, want: []string{"--endpoints"}},
	{line: []string{"leasewrap", "--log-level", "debug", "flock", "run", "--log-f"}, want: []string{"--log-format"}},
	{line: []string{"leasewrap", "--log-format", ""}, want: []string{"auto", "text", "json"}},
	{line: []string{"leasewrap", "claim", "run", "k", "--anchor", "pt"}, want: []string{"ptrace"}},
	{line: []string{"leasewrap", "flock", "run", "/tmp/x", "--", "ech"}, want: []string{"echo"}},
}

// TestCompletionBash completes command lines with the bash script
// `leasewrap completion bash` prints, as bash's programmable completion
// calls it (COMP_WORDS, COMP_CWORD).
func TestCompletionBash(t *testing.T) {
	script := completionScript(t, "bash")
	for _, tc := range completionCases {
		words := make([]string, len(tc.line))
		for i, w := range tc.line {
			words[i] = shellQuote(w)
		}
		prog := "source " + shellQuote(script) + "\n" +
			"complete -p leasewrap >/dev/null || exit 9\n" +
			"COMP_WORDS=(" + strings.Join(words, " ") + "); COMP_CWORD=" + strconv.Itoa(len(tc.line)-1) + "\n" +
			"_leasewrap; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
		checkCandidates(t, "bash", tc, runShell(t, "bash", "--norc", "--noprofile", "-c", prog))
	}
}

// TestCompletionZsh completes command lines with the zsh function
// `leasewrap completion zsh` prints: its reading of the words (what
// _leasewrap hands to _describe, compadd, _files or _normal).
func TestCompletionZsh(t *testing.T) {
	script := completionScript(t, "zsh")
	// Installed as _leasewrap in $fpath, compinit binds it to leasewrap.
	dir := t.TempDir()
	b, _ := os.ReadFile(script)
	if err := os.WriteFile(filepath.Join(dir, "_leasewrap"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runShell(t, "zsh", "-f", "-c", "fpath=("+shellQuote(dir)+" $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[leasewrap]")
	if strings.TrimSpace(out) != "_leasewrap" {
		t.Errorf("compinit with _leasewrap in $fpath: want leasewrap completed by _leasewrap, have %q", out)
	}
	for _, tc := range completionCases {
		words := make([]string, len(tc.line))
		for i, w := range tc.line {
			words[i] = shellQuote(w)
		}
		prog := "source " + shellQuote(script) + "\n" +
			"words=(" + strings.Join(words, " ") + "); CURRENT=" + strconv.Itoa(len(tc.line)) + "\n" +
			"local what wrapped; local -a reply; _leasewrap_state\n" +
			"if [[ $what == wrapped ]]; then print -rl -- ${(k)commands[(I)${words[CURRENT]}*]}; else print -rl -- ${(M)${reply%%:*}:#${words[CURRENT]}*}; fi\n"
		checkCandidates(t, "zsh", tc, runShell(t, "zsh", "-f", "-c", prog))
	}
}

// TestCompletionZshInteractive types TAB after a command line in an
// interactive zsh (on a pseudo-terminal, zsh/zpty) whose compinit found
// _leasewrap in $fpath, and reads the line zsh completed it to.
func TestCompletionZshInteractive(t *testing.T) {
	script := completionScript(t, "zsh")
	dir := t.TempDir()
	b, _ := os.ReadFile(script)
	if err := os.WriteFile(filepath.Join(dir, "_leasewrap"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ansi := regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]|[\x00-\x08\r]`)
	for _, tc := range []struct{ typed, want string }{
		{"leasewrap fl", "leasewrap flock "},
		{"leasewrap kube run --namesp", "leasewrap kube run --namespace "},
		{"leasewrap flock run --log-format j", "leasewrap flock run --log-format json "},
		{"leasewrap -q claim run k --anchor pt", "leasewrap -q claim run k --anchor ptrace "},
	} {
		// Reads what the terminal shows for at most 10 s, until the
		// completed line is there.
		drive := `setopt extendedglob; zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z 'fpath=(` + shellQuote(dir) + ` $fpath); autoload -U compinit; compinit -u -D; PS1="> "'
zpty -w -n z ` + shellQuote(tc.typed) + `$'\t'
all=
for i in {1..100}; do
	sleep 0.1
	while zpty -r -t z out; do all+=$out; done
	[[ ${all//$'\e'\[[0-9;?]#[a-zA-Z]/} == *` + shellQuote(tc.want) + `* ]] && break
done
zpty -d z
print -r -- "$all"`
		out := ansi.ReplaceAllString(runShell(t, "zsh", "-f", "-c", drive), "")
		if !strings.Contains(out, tc.want) {
			t.Errorf("zsh: %q then TAB: want %q on the line, have:\n%q", tc.typed, tc.want, out)
		}
	}
}

// TestCompletionFish completes command lines with fish's own `complete
// -C` over the script `leasewrap completion fish` prints.
func TestCompletionFish(t *testing.T) {
	script := completionScript(t, "fish")
	for _, tc := range completionCases {
		line := strings.Join(tc.line, " ")
		out := runShell(t, "fish", "--no-config", "-c", "source "+shellQuote(script)+"; complete -C "+shellQuote(line))
		var cands []string
		for _, l := range strings.Split(out, "\n") {
			c, _, _ := strings.Cut(l, "\t")
			cands = append(cands, c)
		}
		checkCandidates(t, "fish", tc, strings.Join(cands, "\n"))
	}
}

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	_, err := exec.LookPath(shell)
	testutil.Need(t, shell+" (Debian's "+shell+" package)", err)
	var out, errb bytes.Buffer
	if code := realMain([]string{"completion", shell}, &out, &errb); code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
	}
	p := filepath.Join(t.TempDir(), "leasewrap."+shell)
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runShell(t *testing.T, shell string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", shell, args, err, out)
	}
	return string(out)
}

func checkCandidates(t *testing.T, shell string, tc completionCase, out string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, w := range tc.want {
		if !have[w] {
			t.Errorf("%s: %q: want %q offered, have:\n%s", shell, tc.line, w, out)
		}
	}
	for _, w := range tc.not {
		if have[w] {
			t.Errorf("%s: %q: want %q not offered, have:\n%s", shell, tc.line, w, out)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
