package join

import (
	"strings"
	"testing"
	"time"
)

func TestTokenOptionsSayWhatATokenMayJoin(t *testing.T) {
	tests := []struct {
		name    string
		opts    TokenOptions
		wantErr string
	}{
		{"a token for one member", TokenOptions{TTL: time.Hour, Name: "member-1"}, ""},
		{"a re-join token for one member", TokenOptions{TTL: time.Hour, Name: "member-1", Rejoin: true}, ""},
		{"a token for any new name", TokenOptions{TTL: time.Hour, AnyName: true}, ""},
		{"a token needs a name or any-name", TokenOptions{TTL: time.Hour}, "--name is required"},
		{"a token is for one name or any, not both", TokenOptions{TTL: time.Hour, Name: "member-1", AnyName: true}, "exclude each other"},
		{"a re-join names its member", TokenOptions{TTL: time.Hour, AnyName: true, Rejoin: true}, "--rejoin needs --name"},
		{"a name must be a valid member name", TokenOptions{TTL: time.Hour, Name: "Member_1"}, "not a valid member name"},
		{"a token must live", TokenOptions{Name: "member-1"}, "--ttl must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}
