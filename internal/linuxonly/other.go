//go:build !linux

package linuxonly

// The identifier is the message: the build fails with "undefined:
// leasewrap_builds_only_on_Linux_it_needs_pidfd_proc_and_inotify".
var _ = leasewrap_builds_only_on_Linux_it_needs_pidfd_proc_and_inotify
