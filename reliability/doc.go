// Package reliability is leasewrap's crash, race and bad-input battery. It
// has no library code: its tests build leasewrap with the crash points of
// internal/fault compiled in (-tags leasewrap_faults), drive every point
// for every lease kind, storm one key with many wrappers, admin verbs,
// SIGKILL and SIGSTOP, and feed the CLI hostile files, names and
// environments. After every scenario they check the invariants with a
// fresh leasewrap and with an independent reader of the files written here
// from the protocol description (not with lease/*).
//
// See reliability/LOG.md (summary: docs/RELIABILITY.md) for the scenarios, results and commands.
package reliability
