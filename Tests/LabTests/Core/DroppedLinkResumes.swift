import Testing

extension Lab.Core {
    /// Check 13b: as `Lab.Coc.dropAndResume`, with msgpipe's default backend and link mode (the connection
    /// dropped is the channel or GATT's link, whichever carries the data).
    @Test("a link dropped mid-transfer: send reconnects and Transport resumes; 1 MiB arrives once", .tags(.hci0, .hci1))
    func droppedLinkResumes() {
        LabCheck.run { lab in
            try lab.dropAndResume(name: "msgpipe-drop", [], link: nil)
        }
    }
}
