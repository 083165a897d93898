package execcopy

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// binary writes a file of size random bytes standing for kubesim's.
func binary(t *testing.T, dir string, size int) string {
	t.Helper()
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubesim")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func sameContent(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s differs from %s", b, a)
	}
}

// The copy is made beside the binary once per build, its owner's alone,
// with the binary's name; a rebuild gets a new one, and old builds' copies
// beyond the newest few go.
func TestForCopiesOncePerBuild(t *testing.T) {
	dir := t.TempDir()
	exe := binary(t, dir, 1<<20)
	path, err := For(exe)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(path)) != filepath.Join(dir, dirName) || filepath.Base(path) != "kubesim" {
		t.Fatalf("copy at %s, want %s/BUILD/kubesim", path, filepath.Join(dir, dirName))
	}
	sameContent(t, exe, path)
	for _, p := range []string{path, filepath.Dir(path), filepath.Join(dir, dirName)} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", p, st.Mode().Perm(), err)
		}
	}
	before, _ := os.Stat(path)
	again, err := For(exe)
	if after, _ := os.Stat(again); err != nil || again != path || !os.SameFile(before, after) {
		t.Errorf("second For = %s (%v), want the same file %s untouched", again, err, path)
	}

	// Another binary beside it (a Kubernetes version's) has copies of its
	// own, which kubesim's rebuilds leave alone.
	other := filepath.Join(dir, "kubesim-k8s-1.35")
	if err := os.WriteFile(other, []byte("another binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	otherCopy, err := For(other)
	if err != nil || filepath.Base(otherCopy) != "kubesim-k8s-1.35" {
		t.Fatalf("For(%s) = %s, %v", other, otherCopy, err)
	}
	var builds []string
	for i := range kept + 2 {
		exe = binary(t, dir, 1<<20+i) // a rebuild: another size and time
		if err := os.Chtimes(exe, time.Time{}, time.Now().Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
		p, err := For(exe)
		if err != nil {
			t.Fatal(err)
		}
		sameContent(t, exe, p)
		builds = append(builds, filepath.Base(filepath.Dir(p)))
	}
	entries, _ := os.ReadDir(filepath.Join(dir, dirName))
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kubesim@") {
			left = append(left, e.Name())
		}
	}
	if len(left) != kept || !strings.Contains(strings.Join(left, " "), builds[len(builds)-1]) {
		t.Errorf("copies left %v, want the newest %d of %v", left, kept, builds)
	}
	if _, err := os.Stat(otherCopy); err != nil {
		t.Errorf("kubesim's rebuilds removed another binary's copy: %v", err)
	}
}

// A version's API server, controller-manager and scheduler start at once:
// the first copy of its binary is written once, not once each.
func TestForCopiesOnceWhenAskedAtOnce(t *testing.T) {
	const size = 32 << 20
	exe := binary(t, t.TempDir(), size)
	before := written(t)
	done := make(chan string, 3)
	for range 3 {
		go func() {
			path, err := For(exe)
			if err != nil {
				t.Error(err)
			}
			done <- path
		}()
	}
	for range 3 {
		<-done
	}
	if w := written(t) - before; w >= 2*size {
		t.Errorf("three calls at once wrote %d MiB for a %d MiB binary", w>>20, size>>20)
	}
}

// written is how many bytes this process has written (/proc/self/io).
func written(t *testing.T) int64 {
	t.Helper()
	stats, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(stats)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no wchar in /proc/self/io")
	return 0
}

// Where others may write beside the binary, the copy goes to the user's
// cache directory; where neither will do, the binary runs as it is.
func TestForFallsBack(t *testing.T) {
	dir := t.TempDir()
	exe := binary(t, dir, 64<<10)
	if err := os.Mkdir(filepath.Join(dir, dirName), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, dirName), 0o777); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path, err := For(exe)
	if err != nil || !strings.HasPrefix(path, filepath.Join(cache, "kubesim", "exec")+"/") {
		t.Fatalf("For = %s (%v), want a copy under %s", path, err, cache)
	}
	sameContent(t, exe, path)

	if err := os.RemoveAll(filepath.Join(cache, "kubesim")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "kubesim"), nil, 0o600); err != nil { // a file where the directory goes
		t.Fatal(err)
	}
	if path, err := For(exe); path != exe || err == nil {
		t.Errorf("For = %s (%v), want the binary itself and why", path, err)
	}
}

// What the copy is for: all of it in the page cache, in pages small
// enough that touching one byte a MiB maps little of it (a file read in
// by readahead maps 650–980 KiB a touch on Linux 6.18).
func TestForReadsTheCopyInSmallPages(t *testing.T) {
	exe := binary(t, t.TempDir(), 64<<20)
	path, err := For(exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, 64<<20, unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	resident := make([]byte, len(m)/os.Getpagesize())
	if err := mincore(m, resident); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(resident, []byte{0}); n > 0 {
		t.Errorf("%d of %d pages of the copy not in the page cache", n, len(resident))
	}
	before := rssFile(t)
	sum := 0
	touches := 0
	for off := 0; off < len(m); off += 1 << 20 {
		sum += int(m[off+4097])
		touches++
	}
	perTouch := (rssFile(t) - before) / touches
	t.Logf("%d KiB a touch (bytes summed to %d)", perTouch, sum)
	if perTouch > 128 {
		t.Errorf("a touch mapped %d KiB of the copy, want at most 128 (64 KiB of fault-around, and room)", perTouch)
	}
}

// rssFile is this process's resident file-backed memory, in KiB.
func rssFile(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
