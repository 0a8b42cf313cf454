// A JMS subscriber of the metastore's notifications, as an HCatalog consumer would write it: ActiveMQ's JMS
// client over OpenWire. Compiled and run by tests/test_notify_activemq.py.
//
//   java -cp <activemq jars>:. HCatSubscriber tcp://127.0.0.1:61616 'hcat,hcat.>' EXPECTED TIMEOUT_MS
//
// Prints READY once subscribed, then one line per message: MSG <topic> <JMS type> <body> <property>...,
// with the topic, the body and every property value in Base64 (property: name=base64(value):JavaType),
// then DONE <count> once EXPECTED messages arrived or the timeout passed.

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Enumeration;

import javax.jms.Connection;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.Session;
import javax.jms.TextMessage;
import javax.jms.Topic;

import org.apache.activemq.ActiveMQConnectionFactory;

public class HCatSubscriber {
    private static String b64(String s) {
        return Base64.getEncoder().encodeToString((s == null ? "" : s).getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String topics = args[1];
        int expected = Integer.parseInt(args[2]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[3]);

        Connection connection = new ActiveMQConnectionFactory(url).createConnection();
        connection.start();
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer consumer = session.createConsumer(session.createTopic(topics));
        System.out.println("READY");
        System.out.flush();

        int received = 0;
        while (received < expected) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                break;
            }
            Message m = consumer.receive(left);
            if (m == null) {
                break;
            }
            StringBuilder line = new StringBuilder("MSG ");
            line.append(b64(((Topic) m.getJMSDestination()).getTopicName())).append(' ');
            line.append(m instanceof TextMessage ? "TextMessage" : m.getClass().getSimpleName()).append(' ');
            line.append(b64(m instanceof TextMessage ? ((TextMessage) m).getText() : ""));
            Enumeration<?> names = m.getPropertyNames();
            while (names.hasMoreElements()) {
                String name = (String) names.nextElement();
                Object value = m.getObjectProperty(name);
                line.append(' ').append(name).append('=').append(b64(String.valueOf(value)))
                    .append(':').append(value == null ? "null" : value.getClass().getSimpleName());
            }
            System.out.println(line);
            System.out.flush();
            received++;
        }
        System.out.println("DONE " + received);
        System.out.flush();
        connection.close();
    }
}
