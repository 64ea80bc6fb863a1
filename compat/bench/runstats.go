package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type phaseStats struct {
	start         time.Time
	cpu, faults   int64
	gcs           uint32
	haveProcStats bool
}

func startStats() phaseStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	cpu, faults, ok := procStats()
	return phaseStats{start: time.Now(), cpu: cpu, faults: faults, gcs: m.NumGC, haveProcStats: ok}
}

func (s phaseStats) end() string {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	wall := time.Since(s.start)
	out := fmt.Sprintf("%v, %d GCs", wall.Round(time.Millisecond), m.NumGC-s.gcs)
	if cpu, faults, ok := procStats(); ok && s.haveProcStats {
		out += fmt.Sprintf(", %.0f%% CPU, %d page faults", 100*float64(cpu-s.cpu)/float64(wall), faults-s.faults)
	}
	return out
}

// procStats reads this process's CPU time (ns) and minor page faults from
// /proc/self/stat.
func procStats() (cpu, faults int64, ok bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0, false
	}
	// After the command: state(0) ppid pgrp session tty tpgid flags
	// minflt(7) cminflt majflt cmajflt utime(11) stime(12), in clock ticks.
	minflt, _ := strconv.ParseInt(f[7], 10, 64)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = int64(time.Second / 100) // USER_HZ is 100 on Linux
	return (utime + stime) * tick, minflt, true
}
