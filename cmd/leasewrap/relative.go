package main

import (
	"log/slog"
	"os"
	"path/filepath"
)

// warnRelative warns that the variable name holds a relative path, which
// processes started elsewhere resolve to another what.
func warnRelative(logger *slog.Logger, name, value, what string, attrs ...any) {
	if value == "" || filepath.IsAbs(value) {
		return
	}
	wd, _ := os.Getwd()
	logger.Warn(name+" is relative and resolved against the working directory; processes started elsewhere use another "+what+": set an absolute path",
		append([]any{name, value, "dir", wd}, attrs...)...)
}
