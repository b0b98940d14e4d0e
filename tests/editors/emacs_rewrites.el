;;; emacs_rewrites.el --- An Emacs (batch) session driven from tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; editors/emacs registers `capture serve' with eglot; an "agent" replaces one expression in
;; three buffers, and the user types over it (rewrites it), wraps it, or retypes the old text.
;; Nothing is ever saved: the server judges the unsaved buffers.

(load (expand-file-name "emacs_support.el" (file-name-directory load-file-name)) nil t)

(defconst rewrites-names '("rewritten.py" "wrapped.py" "reverted.py"))
(defconst rewrites-new "sum(items)")

(defun rewrites-goto-expression (text)
  "Move point to the start of TEXT after \"return \" on line 2."
  (goto-char (point-min))
  (forward-line 1)
  (search-forward (concat "return " text) (line-end-position))
  (goto-char (- (point) (length text))))

(defun rewrites-send-changes ()
  "Send the buffer's pending changes to the server, as eglot's idle timer would: batch
Emacs runs no idle timers, and nothing here saves the buffer."
  (eglot--signal-textDocument/didChange))

(defun rewrites-line-2 ()
  (save-excursion
    (goto-char (point-min))
    (forward-line 1)
    (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun rewrites-run ()
  (session-start)
  (let ((buffers nil))
    (dolist (name rewrites-names)
      (with-current-buffer (session-open name)
        (push (cons name (current-buffer)) buffers)
        ;; The agent replaces only the expression `0' of line 2 by `sum(items)'.
        (rewrites-goto-expression "0")
        (undo-boundary)
        (agent-capture-apply-agent-edit (point) (1+ (point)) rewrites-new
                                        :agent "emacs-agent" :model "test-model"
                                        :sessionId "s2" :turnId "t1" :id name)
        (undo-boundary)))
    ;; rewritten.py: the user types a new expression over the agent's, to the end of the line.
    (with-current-buffer (cdr (assoc "rewritten.py" buffers))
      (rewrites-goto-expression rewrites-new)
      (delete-region (point) (line-end-position))
      (insert "functools.reduce(operator.add, items, 0)")
      (rewrites-send-changes))
    ;; wrapped.py: the user wraps it, `int(' right before and `)' right after.
    (with-current-buffer (cdr (assoc "wrapped.py" buffers))
      (rewrites-goto-expression rewrites-new)
      (insert "int(")
      (undo-boundary)
      (forward-char (length rewrites-new))
      (insert ")")
      (rewrites-send-changes))
    ;; reverted.py: the user retypes the old text over it (typing, not the plugin's undo).
    (with-current-buffer (cdr (assoc "reverted.py" buffers))
      (goto-char (point-min))
      (search-forward rewrites-new)
      (replace-match "0" t t)
      (rewrites-send-changes))
    (dolist (expected '(("rewritten.py" . "    return functools.reduce(operator.add, items, 0)")
                        ("wrapped.py" . "    return int(sum(items))")
                        ("reverted.py" . "    return 0")))
      (with-current-buffer (cdr (assoc (car expected) buffers))
        (unless (equal (rewrites-line-2) (cdr expected))
          (error "%s: line 2 is %S" (car expected) (rewrites-line-2)))))
    (with-current-buffer (cdr (assoc "rewritten.py" buffers))
      (session-settle 3))
    ;; Quit without saving anything.
    (dolist (entry buffers)
      (with-current-buffer (cdr entry)
        (unless (buffer-modified-p)
          (error "%s was saved" (car entry)))
        (set-buffer-modified-p nil)))
    (let ((eglot-autoreconnect nil))
      (eglot-shutdown-all))))

(session-exit-after #'rewrites-run)
