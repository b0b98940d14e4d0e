;;; agent-capture.el --- Record what becomes of coding agents' edits, through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (eglot "1.9"))
;; Keywords: tools, convenience
;; URL: https://github.com/agent-capture/agent-capture

;;; Commentary:

;; Registers `capture serve' (agent-capture's language server) with eglot, and gives agent
;; packages the calls to report the edits they make:
;;
;;   (require 'agent-capture)
;;   (agent-capture-setup)                   ; text and programming modes without a server
;;   (add-hook 'prog-mode-hook #'eglot-ensure)
;;
;; eglot runs one server per buffer: modes that already have a language server in
;; `eglot-server-programs' keep it, unless `agent-capture-setup' is called with a non-nil
;; FIRST argument (then agent-capture comes first for `agent-capture-modes').

;;; Code:

(require 'eglot)
(require 'jsonrpc)

(defgroup agent-capture nil
  "Record what becomes of coding agents' edits."
  :group 'tools
  :prefix "agent-capture-")

(defcustom agent-capture-command '("capture" "serve")
  "The command that starts the agent-capture language server."
  :type '(repeat string))

(defcustom agent-capture-modes '(prog-mode text-mode)
  "Major modes (and modes derived from them) whose buffers agent-capture follows."
  :type '(repeat symbol))

(defun agent-capture--entry ()
  (cons agent-capture-modes agent-capture-command))

;;;###autoload
(defun agent-capture-setup (&optional first)
  "Register `capture serve' in `eglot-server-programs' for `agent-capture-modes'.
With FIRST non-nil, put it before the other entries (it then wins for those modes)."
  (setq eglot-server-programs
        (cl-remove-if (lambda (entry) (equal (cdr entry) agent-capture-command))
                      eglot-server-programs))
  (if first
      (push (agent-capture--entry) eglot-server-programs)
    (setq eglot-server-programs
          (append eglot-server-programs (list (agent-capture--entry))))))

(defun agent-capture--server ()
  (or (eglot-current-server)
      (user-error "agent-capture: no eglot server manages this buffer")))

(defun agent-capture-notify (method params)
  "Send METHOD (a keyword such as :capture/proposal) with PARAMS to the server.
Pending buffer changes are sent first, so the server sees the text the notification
talks about."
  (let ((server (agent-capture--server)))
    (eglot--signal-textDocument/didChange)
    (jsonrpc-notify server method params)))

(defun agent-capture-report-proposal (beg end old-text &rest meta)
  "Report that an agent's edit left the text between BEG and END, replacing OLD-TEXT.
META is a plist of capture/proposal fields: :agent :model :sessionId :turnId :tool :id
:state (\"applied\" by default, or \"shown\")."
  (agent-capture-notify
   :capture/proposal
   (append (list :uri (eglot--path-to-uri buffer-file-name)
                 :range (list :start (eglot--pos-to-lsp-position beg)
                              :end (eglot--pos-to-lsp-position end))
                 :oldText old-text
                 :newText (buffer-substring-no-properties beg end))
           meta)))

(defun agent-capture-apply-agent-edit (beg end new-text &rest meta)
  "Replace the text between BEG and END by NEW-TEXT as an agent's edit, and report it.
META as for `agent-capture-report-proposal'."
  (let ((old-text (buffer-substring-no-properties beg end)))
    (save-excursion
      (goto-char beg)
      (delete-region beg end)
      (insert new-text))
    (apply #'agent-capture-report-proposal beg (+ beg (length new-text)) old-text meta)))

(defun agent-capture-undo (&optional arg)
  "Undo (as `undo' with ARG) and tell the server the change was an undo."
  (interactive "P")
  (undo arg)
  (agent-capture-notify
   :capture/undo
   (list :uri (eglot--path-to-uri buffer-file-name)
         :version eglot--versioned-identifier
         :reason "undo")))

(defun agent-capture-decide (id accepted &optional decided-by)
  "Say whether the shown proposal ID was ACCEPTED (t or :json-false), and by whom."
  (agent-capture-notify
   :capture/decision
   (list :id id :accepted (if (eq accepted :json-false) :json-false (if accepted t :json-false))
         :decidedBy (or decided-by "user"))))

(defun agent-capture-test-run (run)
  "Report a test RUN, a plist of capture/testRun fields (:command :exitCode :passed ...)."
  (agent-capture-notify :capture/testRun run))

(defun agent-capture-stats ()
  "Today's figures from the server (a plist); shown in the echo area when interactive."
  (interactive)
  (eglot--signal-textDocument/didChange)
  (let ((stats (jsonrpc-request (agent-capture--server) :workspace/executeCommand
                                '(:command "capture.stats"))))
    (when (called-interactively-p 'interactive)
      (let ((outcomes (plist-get stats :outcomes)))
        (message "agent-capture today: %s proposals, %s kept, %s edited, %s undone, %s pending"
                 (plist-get stats :proposals) (plist-get outcomes :kept)
                 (plist-get outcomes :edited) (plist-get outcomes :undone)
                 (plist-get outcomes :pending))))
    stats))

(provide 'agent-capture)
;;; agent-capture.el ends here
