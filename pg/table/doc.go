// Package table is the pg kind's table: its DDL and the check that a table
// of that name is ours (Ensure, Check), and the statements on its rows —
// each one autocommit statement with the server's statement_timestamp().
// One row per (kind, name) keeps holder, fence, state and expiry; one meta
// row records the last WAL timeline seen and the quarantine after it
// changed. Rows are never deleted: a row keeps its name's fence counter.
package table
