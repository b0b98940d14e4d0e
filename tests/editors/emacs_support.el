;;; emacs_support.el --- What the Emacs sessions of tests/editors share  -*- lexical-binding: t; -*-
;; Starting `capture serve' through editors/emacs, opening a buffer with eglot, waiting, and
;; exiting with a status the test reads.

(require 'agent-capture)

(defun session-wait (predicate timeout what)
  (let ((deadline (+ (float-time) timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun session-start ()
  (setq agent-capture-command
        (list (getenv "CAPTURE_TEST_PYTHON") "-m" "capture" "serve"))
  (agent-capture-setup t)
  (setq eglot-sync-connect 30))

(defun session-open (name)
  (find-file (expand-file-name name (getenv "CAPTURE_TEST_ROOT")))
  (unless (eglot-current-server)
    ;; `eglot-ensure' waits for a command loop that batch mode does not run.
    (apply #'eglot (eglot--guess-contact)))
  (session-wait (lambda () (eglot-current-server)) 30 "the server")
  (current-buffer))

(defun session-settle (count)
  "Wait until the server holds COUNT proposals or more, none of them pending."
  (session-wait (lambda ()
                  (let ((stats (agent-capture-stats)))
                    (and (>= (plist-get stats :proposals) count)
                         (eql (plist-get (plist-get stats :outcomes) :pending) 0))))
                30 "the proposals to settle"))

(defun session-exit-after (run)
  (condition-case err
      (progn (funcall run) (kill-emacs 0))
    (error (princ (format "emacs session failed: %S\n" err) #'external-debugging-output)
           (kill-emacs 1))))

(provide 'emacs_support)
