package load

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// Memory is a process's resident memory as /proc/<pid>/status reports it, in bytes.
type Memory struct {
	RSS  int64 // VmRSS: resident now
	Peak int64 // VmHWM: the most it was ever resident
}

// ReadMemory reads VmRSS and VmHWM of a process.
func ReadMemory(pid int) (Memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	return ParseStatus(data)
}

// ParseStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
func ParseStatus(data []byte) (Memory, error) {
	var m Memory
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, value, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.Peak
		default:
			continue
		}
		f := bytes.Fields(value)
		if len(f) != 2 || string(f[1]) != "kB" {
			return Memory{}, fmt.Errorf("load: malformed %s line %q", name, sc.Bytes())
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("load: malformed %s line %q", name, sc.Bytes())
		}
		*dst = n << 10
		found++
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("load: VmRSS or VmHWM missing from the status")
	}
	return m, nil
}

// Sampler records the largest VmRSS of a process while it runs, polling every interval: the
// peak of one case, which VmHWM (the whole life's peak) cannot tell.
type Sampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max  int64
}

// Sample starts sampling pid.
func Sample(pid int, interval time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if m, err := ReadMemory(pid); err == nil {
				s.mu.Lock()
				s.max = max(s.max, m.RSS)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the largest VmRSS seen, in bytes.
func (s *Sampler) Stop() int64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// clockTick is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100 on every Linux the
// bench runs on (it is part of the user-space ABI).
const clockTick = 10 * time.Millisecond

// ReadCPU reads the CPU time (user and system) a process has used so far.
func ReadCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseStat(data)
}

// ParseStat reads utime and stime from the text of /proc/<pid>/stat.
func ParseStat(data []byte) (time.Duration, error) {
	// The command name, in parentheses, may hold spaces: count fields after its end.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("load: malformed stat %q", data)
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("load: stat has %d fields after the command", len(f))
	}
	var total int64
	for _, field := range f[11:13] { // utime and stime: fields 14 and 15 of the whole line
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("load: malformed stat time %q", field)
		}
		total += n
	}
	return time.Duration(total) * clockTick, nil
}
