;;; scenario.el --- headless Emacs + eglot scenario against the real Steadyhand server  -*- lexical-binding: t -*-
;; Inputs (environment): SH_WORKSPACE (also the current directory), SH_RESULT (JSON
;; written here), SH_CONFIG: "plain" (eglot as shipped, so the server writes disk itself)
;; or "recommended" (SH_USER_CONFIG, the configuration from docs/editors.md, is loaded as
;; a user's init file would). `steadyhand' must be on PATH.
(require 'package)
(package-initialize)
(require 'eglot)
(require 'json)
(require 'cl-lib)

(defvar sh-ws (file-name-as-directory (getenv "SH_WORKSPACE")))
(defvar sh-result (getenv "SH_RESULT"))
(defvar sh-config (or (getenv "SH_CONFIG") "plain"))
(defvar sh-out nil "Result, an alist turned into JSON at the end.")
(defvar sh-saves 0)
(defvar sh-steps nil "Command results, by step name.")
(defvar sh-supersession 0 "Times Emacs asked about the file having changed on disk.")

(setq make-backup-files nil create-lockfiles nil auto-save-default nil
      eglot-autoshutdown nil eglot-sync-connect t)
(add-hook 'after-save-hook (lambda () (cl-incf sh-saves)))

(if (equal sh-config "recommended")
    (load (getenv "SH_USER_CONFIG") nil t t)
  (add-to-list 'eglot-server-programs '(text-mode . ("steadyhand" "serve")))
  ;; eglot 1.9 asks y/n before applying any server edit unless this is nil
  (setq eglot-confirm-server-initiated-edits nil)
  ;; The server wrote the buffer's text to disk behind Emacs's back, so Emacs asks this
  ;; before the next change of the buffer; answer yes as the user would (same text).
  (load "userlock" nil t) ; userlock.el has no provide
  (defun ask-user-about-supersession-threat (_filename)
    (cl-incf sh-supersession))
  ;; ... and eglot's find-file-noselect asks whether to discard the buffer for the disk's
  ;; text before applying each later edit: answer no (keep the buffer, the same text).
  (advice-add 'yes-or-no-p :around
              (lambda (orig prompt)
                (if (string-match-p "changed on disk" prompt)
                    (progn (cl-incf sh-supersession) nil)
                  (funcall orig prompt)))))

(defun sh-put (key value) (push (cons key value) sh-out))
(defun sh-step (key value) (push (cons key value) sh-steps))

(defun sh-disk (file)
  (let ((path (expand-file-name file sh-ws)))
    (if (file-exists-p path)
        (with-temp-buffer
          (insert-file-contents-literally path)
          (decode-coding-string (buffer-string) 'utf-8))
      :json-null)))

(defun sh-text () (buffer-substring-no-properties (point-min) (point-max)))

(defun sh-flush (server)
  "Send the changes eglot is still holding back (it sends didChange when idle)."
  (dolist (buf (eglot--managed-buffers server))
    (with-current-buffer buf (eglot--signal-textDocument/didChange))))

(defun sh-run (server command params &optional no-flush)
  "Run COMMAND with the PARAMS plist; the result plist, or an error description."
  (condition-case err
      (if (and (not no-flush) (fboundp 'steadyhand-command))
          (apply #'steadyhand-command command params) ; the helper from docs/editors.md
        (unless no-flush (sh-flush server))
        (jsonrpc-request server :workspace/executeCommand
                         (list :command command :arguments (vector params))))
    (error (list :rpc_error (format "%S" err)))))

(defun sh-undo ()
  (undo-boundary)
  (setq last-command 'ignore)
  (undo))

(defun sh-main ()
  (find-file (expand-file-name "notes.txt" sh-ws))
  (let ((buf (current-buffer)) server)
    (apply #'eglot (eglot--guess-contact))
    (with-timeout (20 nil)
      (while (not (setq server (eglot-current-server)))
        (accept-process-output nil 0.1)))
    (sh-put 'initialized (and server t))
    (when server
      ;; 1. read through the server: the open buffer
      (sh-step 'read (sh-run server "steadyhand.read" '(:file_path "notes.txt")))
      ;; 2. edit: one versioned WorkspaceEdit, one undo step, disk follows
      (let ((original (sh-text)))
        (undo-boundary)
        (sh-step 'edit (sh-run server "steadyhand.edit"
                              '(:file_path "notes.txt" :old_string "color"
                                :new_string "colour" :replace_all t)))
        (sh-put 'after_edit `((buffer . ,(sh-text)) (disk . ,(sh-disk "notes.txt"))
                              (modified . ,(if (buffer-modified-p) t :json-false))
                              (saves . ,sh-saves)))
        (sh-undo)
        (sh-put 'after_undo `((buffer . ,(sh-text))
                              (restored . ,(if (equal (sh-text) original) t :json-false))))
        (sh-undo) ; undoing the undo: the edit is back
        (sh-put 'after_redo `((buffer . ,(sh-text)))))
      ;; 3. positions on a line with emoji, CJK and a combining accent
      (sh-step 'unicode (sh-run server "steadyhand.edit"
                               (list :file_path "notes.txt"
                                     :old_string "caf\u0301 end" :new_string "caf\u0301 END")))
      (sh-put 'after_unicode `((buffer . ,(sh-text)) (disk . ,(sh-disk "notes.txt"))))
      ;; 4. the user types, then the agent edits: stale, buffer intact
      (undo-boundary)
      (goto-char (point-max))
      (insert "typed by the user\n")
      (let ((typed (sh-text)) (disk (sh-disk "notes.txt")))
        (sh-step 'stale (sh-run server "steadyhand.edit"
                               '(:file_path "notes.txt" :old_string "first"
                                 :new_string "FIRST")))
        (sh-put 'after_stale `((typed . ,typed) (buffer . ,(sh-text))
                               (disk_before . ,disk) (disk . ,(sh-disk "notes.txt")))))
      ;; the user takes the typing back
      (sh-undo)
      (sh-put 'after_take_back `((buffer . ,(sh-text)) (disk . ,(sh-disk "notes.txt"))))
      ;; 5. the user types and eglot has not sent the change yet when the edit arrives:
      ;;    eglot refuses the versioned edit
      (sh-step 'race_read (sh-run server "steadyhand.read" '(:file_path "notes.txt")))
      (goto-char (point-min))
      (insert "typed just now\n")
      (let ((typed (sh-text)) (disk (sh-disk "notes.txt")))
        (sh-step 'race (sh-run server "steadyhand.edit"
                              '(:file_path "notes.txt" :old_string "second"
                                :new_string "SECOND")
                              'no-flush))
        (sh-put 'after_race `((typed . ,typed) (buffer . ,(sh-text))
                              (disk_before . ,disk) (disk . ,(sh-disk "notes.txt")))))
      ;; 6. files that are not open go straight to disk
      (sh-step 'closed_read (sh-run server "steadyhand.read" '(:file_path "closed.txt")))
      (sh-step 'closed_edit (sh-run server "steadyhand.edit"
                                   '(:file_path "closed.txt" :old_string "on disk"
                                     :new_string "ON DISK")))
      (sh-step 'create (sh-run server "steadyhand.write"
                              '(:file_path "sub/new.txt" :content "brand new\n")))
      (sh-put 'after_closed
              `((disk . ,(sh-disk "closed.txt"))
                (visited . ,(if (find-buffer-visiting (expand-file-name "closed.txt" sh-ws))
                                t :json-false))
                (created . ,(sh-disk "sub/new.txt"))
                (created_visited . ,(if (find-buffer-visiting
                                         (expand-file-name "sub/new.txt" sh-ws))
                                        t :json-false))))
      (sh-put 'saves sh-saves)
      (sh-put 'supersession_prompts sh-supersession)
      ;; 7. the configuration's save handler: a buffer typed in since the version the
      ;;    server names is not saved (that would save the typing); at that version it is
      (when (equal sh-config "recommended")
        (with-current-buffer buf
          (let* ((uri (if (fboundp 'eglot-path-to-uri)
                          (eglot-path-to-uri (buffer-file-name))
                        (eglot--path-to-uri (buffer-file-name))))
                 (key (intern (concat ":" uri)))
                 (disk (sh-disk "notes.txt"))
                 (before eglot--versioned-identifier)
                 (saves sh-saves)
                 refused)
            (goto-char (point-max))
            (insert "typed after the edit\n")
            (setq refused (eglot-handle-request server 'steadyhand/saveDocuments
                                                :uris (vector uri)
                                                :versions (list key before)))
            (sh-put 'save_handler
                    `((refused . ,(length (plist-get refused :saved)))
                      (disk_before . ,disk)
                      (disk_after_refusal . ,(sh-disk "notes.txt"))
                      (modified . ,(if (buffer-modified-p) t :json-false))
                      (saves . ,(- sh-saves saves))
                      (accepted . ,(length
                                    (plist-get
                                     (eglot-handle-request
                                      server 'steadyhand/saveDocuments
                                      :uris (vector uri)
                                      :versions (list key eglot--versioned-identifier))
                                     :saved)))
                      (typed . ,(sh-text))
                      (disk_after_save . ,(sh-disk "notes.txt")))))))
      (with-current-buffer buf (set-buffer-modified-p nil))
      (ignore-errors (eglot-shutdown server)))))

(condition-case err
    (sh-main)
  (error (sh-put 'fatal (format "%S" err))))
(sh-put 'steps sh-steps)
(with-temp-file sh-result
  (insert (json-encode sh-out)))
(kill-emacs 0)
