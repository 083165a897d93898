// Command etcdprobe runs an embedded etcd, as kubesim does, for a while of
// (virtual) time and reports how it behaved: how long it took to lead, its
// raft term (a term above 2 means it lost and re-won leadership), put latency,
// when a lease without keep-alives expired, the warnings it logged, and the
// CPU it used per real second. Built with the scaled-clock overlay
// (patches/go) and run at several KUBESIM_TIME_SCALEs it shows what etcd
// makes of a faster clock.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
	"unsafe"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

type report struct {
	Scale           string         `json:"scale"`
	TickMs          uint           `json:"tickMs"`
	ReadyReal       string         `json:"readyReal"` // start to ready, real
	Term            uint64         `json:"term"`
	Puts            int            `json:"puts"`
	PutP50, PutP99  string         // virtual
	LeaseTTL        string         `json:"leaseTTL"`
	LeaseGoneAfter  string         `json:"leaseGoneAfter"` // virtual, from grant to key gone
	LeaseGoneReal   string         `json:"leaseGoneReal"`
	CPUPerRealSec   float64        `json:"cpuPerRealSecond"`     // user+sys seconds per real second, during the puts
	IdleCPU         float64        `json:"idleCpuPerRealSecond"` // the same, idle
	Warnings        map[string]int `json:"warnings"`
	RunVirtual      string         `json:"runVirtual"`
	RunReal         string         `json:"runReal"`
	VirtualAtFinish string         `json:"virtualAtFinish"`
}

func realNow() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func freeURL() url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

func main() {
	tick := flag.Uint("tick-ms", 100, "etcd's heartbeat interval (kubesim: 10)")
	election := flag.Uint("election-ms", 1000, "etcd's election timeout (kubesim: 100)")
	run := flag.Duration("run", 20*time.Second, "how long to put keys, in virtual time")
	ttl := flag.Int64("lease-ttl", 5, "the TTL of the lease left to expire, seconds")
	flag.Parse()
	dir, err := os.MkdirTemp("", "etcdprobe")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	logFile := filepath.Join(dir, "etcd.log")

	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	client, peer := freeURL(), freeURL()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.TickMs, cfg.ElectionMs = *tick, *election
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{logFile}
	cfg.WarningUnaryRequestDuration = 300 * time.Millisecond // the etcd command's default

	r := report{Scale: os.Getenv("KUBESIM_TIME_SCALE"), TickMs: *tick, RunVirtual: run.String(), LeaseTTL: fmt.Sprint(*ttl, "s")}
	real0 := realNow()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fail(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		fail(fmt.Errorf("etcd not ready after a virtual minute"))
	}
	r.ReadyReal = (realNow() - real0).String()
	c := v3client.New(e.Server)
	ctx := context.Background()

	// Idle for a tenth of the run: what its ticks alone cost.
	cpu0, realStart := cpu(), realNow()
	time.Sleep(*run / 10)
	r.IdleCPU = float64(cpu()-cpu0) / float64(realNow()-realStart)

	// Puts, one every 100ms virtual, for the run.
	var lat []time.Duration
	cpu0, realStart = cpu(), realNow()
	start := time.Now()
	for t := time.NewTicker(100 * time.Millisecond); time.Since(start) < *run; <-t.C {
		p := time.Now()
		if _, err := c.Put(ctx, "k", p.String()); err != nil {
			fail(err)
		}
		lat = append(lat, time.Since(p))
	}
	realRun := realNow() - realStart
	r.CPUPerRealSec = float64(cpu()-cpu0) / float64(realRun)
	r.RunReal = realRun.String()
	slices.Sort(lat)
	r.Puts = len(lat)
	r.PutP50, r.PutP99 = lat[len(lat)/2].String(), lat[len(lat)*99/100].String()

	// A lease left to expire.
	g, err := c.Grant(ctx, *ttl)
	if err != nil {
		fail(err)
	}
	granted, grantedReal := time.Now(), realNow()
	if _, err := c.Put(ctx, "leased", "x", clientv3.WithLease(g.ID)); err != nil {
		fail(err)
	}
	for {
		resp, err := c.Get(ctx, "leased")
		if err != nil {
			fail(err)
		}
		if len(resp.Kvs) == 0 {
			break
		}
		if time.Since(granted) > time.Duration(*ttl)*time.Second*3 {
			fail(fmt.Errorf("the lease's key outlived 3× its TTL"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.LeaseGoneAfter = time.Since(granted).Round(time.Millisecond).String()
	r.LeaseGoneReal = (realNow() - grantedReal).Round(time.Millisecond).String()
	r.Term = e.Server.Term()
	r.VirtualAtFinish = time.Now().UTC().Format(time.RFC3339)

	c.Close()
	e.Close()
	r.Warnings = warnings(logFile)
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// warnings counts the log's warnings by message.
func warnings(path string) map[string]int {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	n := map[string]int{}
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var l struct{ Level, Msg string }
		if json.Unmarshal(s.Bytes(), &l) == nil && l.Level == "warn" {
			n[l.Msg]++
		}
	}
	return n
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "etcdprobe:", err)
	os.Exit(1)
}
