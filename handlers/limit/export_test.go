package limit

// Rule returns the limiter's rule.
func (l *Limiter) Rule() Rule { return l.rule }
