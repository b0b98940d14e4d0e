;;; emacs_session.el --- An Emacs (batch) session driven from tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; editors/emacs registers `capture serve' with eglot; an "agent" edits three buffers, the
;; user keeps one, rewrites part of another and undoes the third.

(require 'agent-capture)

(defconst session-new
  "    result = 0\n    for item in items:\n        result += item\n    return result\n")

(defun session-wait (predicate timeout what)
  (let ((deadline (+ (float-time) timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun session-open (name)
  (find-file (expand-file-name name (getenv "CAPTURE_TEST_ROOT")))
  (unless (eglot-current-server)
    ;; `eglot-ensure' waits for a command loop that batch mode does not run.
    (apply #'eglot (eglot--guess-contact)))
  (session-wait (lambda () (eglot-current-server)) 30 "the server")
  (current-buffer))

(defun session-replace (from to)
  (goto-char (point-min))
  (search-forward from)
  (replace-match to t t))

(defun session-run ()
  (setq agent-capture-command
        (list (getenv "CAPTURE_TEST_PYTHON") "-m" "capture" "serve"))
  (agent-capture-setup t)
  (setq eglot-sync-connect 30)
  (let ((buffers nil))
    (dolist (name '("kept.py" "edited.py" "undone.py"))
      (with-current-buffer (session-open name)
        (push (cons name (current-buffer)) buffers)
        (goto-char (point-min))
        (search-forward "    return 0\n")
        (undo-boundary)
        (agent-capture-apply-agent-edit (match-beginning 0) (match-end 0) session-new
                                        :agent "emacs-agent" :model "test-model"
                                        :sessionId "s1" :turnId "t1" :id name)
        (undo-boundary)))
    (with-current-buffer (cdr (assoc "edited.py" buffers))
      (session-replace "for item in items:" "while items:")
      (session-replace "result += item\n" "result += items.pop()\n"))
    (with-current-buffer (cdr (assoc "undone.py" buffers))
      (agent-capture-undo))
    (with-current-buffer (cdr (assoc "kept.py" buffers))
      (goto-char (point-min))
      (insert "# reviewed\n"))
    (dolist (entry buffers)
      (with-current-buffer (cdr entry) (save-buffer)))
    (with-current-buffer (cdr (assoc "kept.py" buffers))
      (session-wait (lambda ()
                      (let ((stats (agent-capture-stats)))
                        (and (>= (plist-get stats :proposals) 3)
                             (eql (plist-get (plist-get stats :outcomes) :pending) 0))))
                    30 "the proposals to settle"))
    (let ((eglot-autoreconnect nil))
      (eglot-shutdown-all))))

(condition-case err
    (progn (session-run) (kill-emacs 0))
  (error (princ (format "emacs session failed: %S\n" err) #'external-debugging-output)
         (kill-emacs 1)))
