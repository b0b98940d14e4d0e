;;; emacs_session.el --- An Emacs (batch) session driven from tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; editors/emacs registers `capture serve' with eglot; an "agent" edits three buffers, the
;; user keeps one, rewrites part of another and undoes the third.

(load (expand-file-name "emacs_support.el" (file-name-directory load-file-name)) nil t)

(defconst session-new
  "    result = 0\n    for item in items:\n        result += item\n    return result\n")

(defun session-replace (from to)
  (goto-char (point-min))
  (search-forward from)
  (replace-match to t t))

(defun session-run ()
  (session-start)
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
      (session-settle 3))
    (let ((eglot-autoreconnect nil))
      (eglot-shutdown-all))))

(session-exit-after #'session-run)
