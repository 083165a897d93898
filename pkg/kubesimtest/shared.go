package kubesimtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// shared is the one cluster Shared hands out per test binary, started by
// the first test that asks for it and deleted by Main.
var shared struct {
	mu     sync.Mutex
	inMain bool
	opts   []Option
	dir    string
	c      *Cluster
	err    error // why it could not start: every later caller is told
	// created is the cluster kubesim was run for, started or not: Main
	// deletes it.
	created *Cluster
}

// live are the clusters running now, for Main to delete on an interrupt.
var live sync.Map // *Cluster → struct{}

// Main runs the tests and then deletes the shared cluster, if Shared
// started one, and exits with the tests' code. Call it from TestMain;
// opts shape the shared cluster:
//
//	func TestMain(m *testing.M) { kubesimtest.Main(m, kubesimtest.Nodes(3)) }
//
// An interrupt (Ctrl-C, SIGTERM) while the tests run deletes every cluster
// of the test binary before it exits, and so does go test's -timeout just
// before it ends the binary. A binary killed outright (SIGKILL) leaves its
// clusters running: `kubesim delete cluster --all` with KUBESIM_HOME set
// to their directory ($TMPDIR/kubesimtest-*/home) removes them.
func Main(m *testing.M, opts ...Option) {
	shared.mu.Lock()
	shared.inMain, shared.opts = true, opts
	shared.mu.Unlock()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "kubesimtest: %s: deleting the test binary's clusters\n", sig)
		deleteAll()
		os.Exit(1)
	}()

	// go test -timeout panics the binary, which runs no cleanups: delete
	// the clusters a little before.
	flag.Parse()
	timer := time.AfterFunc(time.Duration(math.MaxInt64), func() {
		fmt.Fprintln(os.Stderr, "kubesimtest: the tests are about to time out: deleting the test binary's clusters")
		deleteAll()
	})
	if f := flag.Lookup("test.timeout"); f != nil {
		if timeout, _ := f.Value.(flag.Getter).Get().(time.Duration); timeout > 20*time.Second {
			timer.Reset(timeout - min(10*time.Second, timeout/10))
		}
	}

	code := m.Run()
	timer.Stop()
	signal.Stop(signals)
	if err := deleteShared(); err != nil {
		fmt.Fprintf(os.Stderr, "kubesimtest: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// Shared hands the test its own namespace in the test binary's shared
// cluster, started at the first call (with Main's options). Tests using it
// may run in parallel; each namespace is deleted when its test ends, the
// cluster when the tests end. The *Cluster is the shared one, seen from t:
// a node stopped there is stopped for every test.
func Shared(t testing.TB) (*Cluster, string) {
	t.Helper()
	c, err := sharedCluster()
	if err != nil {
		t.Fatalf("kubesimtest.Shared: %v", err)
	}
	view := *c
	view.t = t
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		t.Fatalf("kubesimtest.Shared: %v", err)
	}
	ns, err := newNamespace(cs, t.Name())
	if err != nil {
		t.Fatalf("kubesimtest.Shared: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			view.printLogs(t.Logf)
		}
		// The namespace controller deletes what is in it; no need to wait.
		err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubesimtest: deleting namespace %s: %v", ns, err)
		}
	})
	return &view, ns
}

// sharedCluster starts the shared cluster once; parallel callers wait.
func sharedCluster() (*Cluster, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		return nil, errors.New("call kubesimtest.Main from TestMain, so the shared cluster is deleted when the tests end: func TestMain(m *testing.M) { kubesimtest.Main(m) }")
	}
	if shared.c != nil || shared.err != nil {
		return shared.c, shared.err
	}
	if shared.dir, shared.err = newDir(); shared.err != nil {
		return nil, shared.err
	}
	c, err := start(shared.dir, "shared", startTimeout, shared.opts)
	if c != nil {
		shared.created = c
		live.Store(c, struct{}{})
	}
	if err != nil {
		shared.err = fmt.Errorf("starting the shared cluster: %w", err)
		if c != nil {
			c.printLogs(func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) })
		}
		return nil, shared.err
	}
	shared.c = c
	return c, nil
}

// newNamespace creates a namespace named after the test and waits for its
// default ServiceAccount, without which pods cannot be created in it.
func newNamespace(cs kubernetes.Interface, testName string) (string, error) {
	prefix := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating a namespace: %w", err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("namespace %s: no default ServiceAccount after a minute: %w", ns.Name, err)
	}
	return ns.Name, nil
}

// deleteShared deletes the shared cluster, if it was started.
func deleteShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.dir == "" {
		return nil
	}
	defer os.RemoveAll(shared.dir)
	if c := shared.created; c != nil {
		live.Delete(c)
		return c.delete()
	}
	return nil
}

// deleteAll deletes every live cluster at once.
func deleteAll() {
	var wg sync.WaitGroup
	live.Range(func(k, _ any) bool {
		wg.Go(func() {
			c := k.(*Cluster)
			_ = c.delete()
			os.RemoveAll(filepath.Dir(c.home)) // the test's cleanups will not run
		})
		return true
	})
	wg.Wait()
}
