package session

// MaxRecordBytes bounds an owner record. Readers read at most this many
// bytes plus one, and DecodeOwner refuses a larger record as corrupt
// (ErrCorrupt): an acquirer refuses to run beside it, Inspect lists it
// as unverifiable, Renew reports the lease lost, and nothing removes it.
// The seed writes thirteen fields, pretty-printed: under a kilobyte even
// with a long endpoint and executable path (PATH_MAX is 4 KiB). 1 MiB is a
// thousand times that.
const MaxRecordBytes = 1 << 20
