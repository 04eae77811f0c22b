package main

// reserveHashCmd prints where a key's record lives. It touches nothing.
type reserveHashCmd struct {
	reserveKeyFlags
}

type reserveHashOutput struct {
	Key     string `json:"key"`
	Repo    string `json:"repo"`
	Branch  string `json:"branch"`
	KeyHash string `json:"key_hash"`
	Path    string `json:"path"`
}

func (c *reserveHashCmd) Run(streams ioStreams) error {
	s, err := c.store()
	if err != nil {
		return err
	}
	k := c.key()
	return writeJSON(streams.Out, reserveHashOutput{
		Key: c.Key, Repo: c.Repo, Branch: c.Branch, KeyHash: k.Hash(), Path: s.RecordPath(k),
	})
}
