// Package metrics renders what a run did in the Prometheus text exposition
// format 0.0.4: the textfile for node_exporter's textfile collector
// (Textfile) and the live state a --listen endpoint serves (Live, Server).
//
// It imports only the standard library: client_golang and net/http would
// cost every cron fire their start-up (bench/LOG.md). Tests parse every
// output with prometheus/common/expfmt so the format cannot drift. Textfile
// is pure; the caller serializes updates of a file and decides whether the
// previous file is leasewrap's own.
package metrics
