// Package join is the hub side of joining: bootstrap tokens (`hub token create`)
// and the join endpoint, which checks a token, signs the member's certificate
// and creates its MemberCluster and Work namespace; and leaving.
package join

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
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

// Keys of a token Secret's data.
const (
	keyTokenID     = "token-id"
	keyTokenSecret = "token-secret"
	keyExpiration  = "expiration"
	keyUsedBy      = "used-by"
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

// CreateToken stores a new bootstrap token valid for ttl and returns it.
func CreateToken(ctx context.Context, c client.Client, namespace string, ttl time.Duration) (string, time.Time, error) {
	if ttl <= 0 {
		return "", time.Time{}, fmt.Errorf("--ttl must be positive, got %s", ttl)
	}
	id, err := randomString(6)
	if err != nil {
		return "", time.Time{}, err
	}
	secret, err := randomString(16)
	if err != nil {
		return "", time.Time{}, err
	}
	expires := time.Now().Add(ttl).UTC().Truncate(time.Second)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: tokenSecretName(id),
			Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla"},
		},
		Type: TokenSecretType,
		StringData: map[string]string{
			keyTokenID:     id,
			keyTokenSecret: secret,
			keyExpiration:  expires.Format(time.RFC3339),
		},
	}
	if err := c.Create(ctx, s); err != nil {
		return "", time.Time{}, fmt.Errorf("failed to store the token: %w", err)
	}
	return id + "." + secret, expires, nil
}

// errTokenRefused is a join refusal whose message is meant for the user.
type errTokenRefused struct{ msg string }

func (e errTokenRefused) Error() string { return e.msg }

// checkToken validates a token for a member and, the first time, records which
// member used it (a token joins one member; re-joining the same member is fine).
func checkToken(ctx context.Context, c client.Client, namespace, token, member string, now time.Time) error {
	id, secret, err := joinproto.ParseToken(token)
	if err != nil {
		return errTokenRefused{"the token is malformed (" + err.Error() + "): copy it from `hub token create`"}
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: tokenSecretName(id)}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return errTokenRefused{"the token is unknown to the hub (never created, or deleted): create one with `hub token create`"}
		}
		return fmt.Errorf("failed to read the token: %w", err)
	}
	if s.Type != TokenSecretType || subtle.ConstantTimeCompare(s.Data[keyTokenSecret], []byte(secret)) != 1 {
		return errTokenRefused{"the token is unknown to the hub (never created, or deleted): create one with `hub token create`"}
	}
	expires, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
	if err != nil || now.After(expires) {
		return errTokenRefused{fmt.Sprintf("the token expired at %s: create a new one with `hub token create`", string(s.Data[keyExpiration]))}
	}
	if used := string(s.Data[keyUsedBy]); used != "" && used != member {
		return errTokenRefused{fmt.Sprintf("the token was already used to join member %q: create a new token for %q with `hub token create`", used, member)}
	}
	if string(s.Data[keyUsedBy]) == member {
		return nil
	}
	// Optimistic locking: two joins racing on one token cannot both claim it.
	patch := client.MergeFromWithOptions(s.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[keyUsedBy] = []byte(member)
	if err := c.Patch(ctx, s, patch); err != nil {
		return fmt.Errorf("failed to mark the token used: %w", err)
	}
	return nil
}
