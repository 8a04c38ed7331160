/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package join is the hub side of joining: bootstrap tokens (`hub token create`),
// the join endpoint, which checks a token, signs the member's certificate and
// creates its MemberCluster and Work namespace, certificate renewal, and leaving.
package join

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	joinproto "github.com/flotilla-io/flotilla/pkg/join"
)

// TokenSecretType marks the Secrets that hold bootstrap tokens.
const TokenSecretType corev1.SecretType = "flotilla.io/bootstrap-token"

// LabelBootstrapToken is set on every token Secret, so that the hub can find
// (and delete) expired ones without reading other Secrets.
const LabelBootstrapToken = "flotilla.io/bootstrap-token"

// Keys of a token Secret's data.
const (
	keyTokenID     = "token-id"
	keyTokenSecret = "token-secret"
	keyExpiration  = "expiration"
	keyUsedBy      = "used-by"
	// keyMemberName is the only member name the token may join as.
	keyMemberName = "member-name"
	// keyAnyName ("true") lets the token join as any name no member has.
	keyAnyName = "any-name"
	// keyRejoin ("true") lets the token join as member-name even if that
	// member exists: a re-join, with a new key and certificate.
	keyRejoin = "rejoin"
)

func tokenSecretName(id string) string { return "flotilla-token-" + id }

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomString(n int) (string, error) {
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenAlphabet))))
		if err != nil {
			return "", err
		}
		b[i] = tokenAlphabet[k.Int64()]
	}
	return string(b), nil
}

// TokenOptions say what a bootstrap token may do.
type TokenOptions struct {
	// TTL is how long the token is valid. Required (positive).
	TTL time.Duration
	// Name is the only member name the token may join as. Required unless
	// AnyName.
	Name string
	// AnyName lets the token join as any name that no member has (for
	// automation). Exclusive with Name and Rejoin.
	AnyName bool
	// Rejoin lets the token join as Name even though member Name exists: the
	// member gets a new key and certificate, and its old certificate stops
	// working. Requires Name.
	Rejoin bool
}

// Validate reports the first problem with the options, naming the flag.
func (o TokenOptions) Validate() error {
	switch {
	case o.TTL <= 0:
		return fmt.Errorf("--ttl must be positive, got %s", o.TTL)
	case o.AnyName && o.Name != "":
		return errors.New("--any-name and --name exclude each other: a token is either for one member or for any new one")
	case o.AnyName && o.Rejoin:
		return errors.New("--rejoin needs --name: a re-join is for one existing member")
	case !o.AnyName && o.Name == "":
		return errors.New("--name is required: the member this token may join as (or --any-name for a token that may join as any new name)")
	}
	if err := validateMember(o.Name, nil); o.Name != "" && err != nil {
		return err
	}
	return nil
}

// CreateToken stores a new bootstrap token and returns it and its expiry.
func CreateToken(ctx context.Context, c client.Client, namespace string, opts TokenOptions) (string, time.Time, error) {
	if err := opts.Validate(); err != nil {
		return "", time.Time{}, err
	}
	id, err := randomString(6)
	if err != nil {
		return "", time.Time{}, err
	}
	secret, err := randomString(16)
	if err != nil {
		return "", time.Time{}, err
	}
	expires := time.Now().Add(opts.TTL).UTC().Truncate(time.Second)
	data := map[string]string{
		keyTokenID:     id,
		keyTokenSecret: secret,
		keyExpiration:  expires.Format(time.RFC3339),
	}
	switch {
	case opts.AnyName:
		data[keyAnyName] = "true"
	default:
		data[keyMemberName] = opts.Name
		if opts.Rejoin {
			data[keyRejoin] = "true"
		}
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: tokenSecretName(id),
			Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla", LabelBootstrapToken: "true"},
		},
		Type:       TokenSecretType,
		StringData: data,
	}
	if err := c.Create(ctx, s); err != nil {
		return "", time.Time{}, fmt.Errorf("failed to store the token: %w", err)
	}
	return id + "." + secret, expires, nil
}

// errRefused is a refusal whose message is meant for the user: one line that
// says what to do.
type errRefused struct{ msg string }

func (e errRefused) Error() string { return e.msg }

func refusef(format string, args ...any) error { return errRefused{fmt.Sprintf(format, args...)} }

// grant is what a valid token allows for one join.
type grant struct {
	// mayExist: the member may already exist (a re-join token, or a retry
	// of the join that used this token).
	mayExist bool
}

// checkToken validates a token for joining as member, and marks it used by
// member (a token joins one member; retrying that member's join is fine).
// exists says whether a MemberCluster of that name exists. An expired token
// is deleted.
func checkToken(ctx context.Context, c client.Client, namespace, token, member string, exists bool, now time.Time) (grant, error) {
	id, secret, err := joinproto.ParseToken(token)
	if err != nil {
		return grant{}, refusef("the token is malformed (%v): copy it from `hub token create`", err)
	}
	s := &corev1.Secret{}
	unknown := refusef("the token is unknown to the hub (never created, expired and removed, or deleted): create one with `hub token create --name %s`", member)
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: tokenSecretName(id)}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return grant{}, unknown
		}
		return grant{}, fmt.Errorf("failed to read the token: %w", err)
	}
	if s.Type != TokenSecretType || subtle.ConstantTimeCompare(s.Data[keyTokenSecret], []byte(secret)) != 1 {
		return grant{}, unknown
	}
	expires, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
	if err != nil || now.After(expires) {
		if err := c.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			return grant{}, fmt.Errorf("failed to delete an expired token: %w", err)
		}
		return grant{}, refusef("the token expired at %s: create a new one with `hub token create --name %s`", string(s.Data[keyExpiration]), member)
	}
	bound := string(s.Data[keyMemberName])
	anyName := string(s.Data[keyAnyName]) == "true"
	rejoin := string(s.Data[keyRejoin]) == "true"
	used := string(s.Data[keyUsedBy])
	switch {
	case !anyName && bound != member:
		return grant{}, refusef("the token was created for member %q, not %q: run `agent join --name %s`, or create a token for %q with `hub token create --name %s`", bound, member, bound, member, member)
	case used != "" && used != member:
		return grant{}, refusef("the token was already used to join member %q: create a new token for %q with `hub token create --name %s`", used, member, member)
	case exists && !rejoin && used != member:
		return grant{}, refusef("member %q is already in the fleet and this token may not take it over: to re-join that member, create a token with `hub token create --name %s --rejoin`; to add a new member, choose another --name", member, member)
	}
	g := grant{mayExist: rejoin || used == member}
	if used == member {
		return g, nil
	}
	// Optimistic locking: two joins racing on one token cannot both claim it.
	patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[keyUsedBy] = []byte(member)
	if err := c.Patch(ctx, s, patch); err != nil {
		if apierrors.IsConflict(err) {
			return grant{}, refusef("the token was used by another join at the same moment: create a new token with `hub token create --name %s`", member)
		}
		return grant{}, fmt.Errorf("failed to mark the token used: %w", err)
	}
	return g, nil
}

// DeleteExpiredTokens deletes the token Secrets in namespace that expired
// before now, and returns how many it deleted.
func DeleteExpiredTokens(ctx context.Context, c client.Client, namespace string, now time.Time) (int, error) {
	list := &corev1.SecretList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{LabelBootstrapToken: "true"}); err != nil {
		return 0, fmt.Errorf("failed to list bootstrap tokens: %w", err)
	}
	deleted := 0
	for i := range list.Items {
		s := &list.Items[i]
		if s.Type != TokenSecretType {
			continue
		}
		expires, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
		if err == nil && !now.After(expires) {
			continue
		}
		if err := c.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("failed to delete expired token %s: %w", s.Name, err)
		}
		deleted++
	}
	return deleted, nil
}
