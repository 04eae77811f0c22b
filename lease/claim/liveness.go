package claim

// isSameMachine mirrors fno.claims.hostid.is_same_machine: machine ids decide
// when both exist; a recorded id with ours unreadable counts as same machine;
// without a recorded id, host is compared with gethostname.
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

// isLive: same machine and the pid's process started no later than the claim
// (a later start is PID reuse).
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

// Classify mirrors staleness.classify: an expired TTL claim with a live local pid
// stays Live; an unexpired one without is Suspect.
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
