// Package kubeconfig changes a user's kubeconfig file without ever losing
// what others put there: under the lock file kubectl and client-go take,
// in one atomic write, private to its owner (it holds keys), and touching
// only the entries it is asked to, so every other byte stays as it was.
package kubeconfig
