// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package channel // import "github.com/agenteval/agenteval-collector/internal/channel"

import (
	"errors"
	"fmt"
)

// The error classes of the channel. Every error Service returns wraps exactly one of
// them (test with errors.Is); the HTTP adapter maps them to status codes (in order:
// 400, 401, 403, 404, 409, 413).
var (
	ErrInvalid      = errors.New("invalid request")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrTooLarge     = errors.New("too large")
)

// classError is a message for the client wrapping its class.
type classError struct {
	class error
	msg   string
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.class }

func errorf(class error, format string, args ...any) error {
	return &classError{class: class, msg: fmt.Sprintf(format, args...)}
}

// Errorf returns an error of class (one of the Err* values) with a client-facing
// message; stores use it for ErrNotFound and ErrConflict.
func Errorf(class error, format string, args ...any) error { return errorf(class, format, args...) }
