package claim

// isSameMachine mirrors fno.claims.hostid.is_same_machine: the recorded
// machine id decides when both sides have one; a recorded id read where
// ours is unreadable is UNKNOWN and counts as same machine (the pid check
// still decides, so this only ever withholds a steal); a record without a
// machine id falls back to comparing host with gethostname.
func (c *Claims) isSameMachine(host string, machine *string) bool {
	mine := c.machineID()
	if machine != nil && *machine != "" {
		if mine != "" {
			return *machine == mine
		}
		return true
	}
	if host == "" {
		return false
	}
	return host == c.hostname()
}

// isLive: same machine, pid inspectable, and its process started no later
// than the claim was taken (a later start is PID reuse).
func (c *Claims) isLive(rec *Record) bool {
	if !c.isSameMachine(rec.Host, rec.MachineID) {
		return false
	}
	created, ok := c.createTime(rec.PID)
	return ok && created <= rec.AcquiredAt
}

func isExpired(rec *Record, now int64) bool {
	return rec.ExpiresAt != nil && now >= *rec.ExpiresAt
}

// Classify mirrors staleness.classify, including the hybrid arm (an
// expired TTL claim whose pid is a live local process stays Live) and the
// Suspect arm (an unexpired TTL claim whose pid is not live).
func (c *Claims) Classify(rec *Record, nowMs int64) State {
	live := c.isLive(rec)
	switch {
	case isExpired(rec, nowMs), rec.ExpiresAt == nil:
		if live {
			return Live
		}
		return Stale
	case live:
		return Live
	default:
		return Suspect
	}
}
